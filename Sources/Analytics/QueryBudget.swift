import Foundation
import Synchronization

/// What one query may spend: time until a deadline and bytes of state (distinct values, groups,
/// samples, extracted events), and a flag another task sets to stop it (its client left, the server
/// is stopping). The engine checks it inside the scan (``QueryMeter``), so a query stops itself,
/// frees its thread and answers Keen's error, however many rows or regex steps it had ahead.
public final class QueryBudget: Sendable {
    /// Seconds the query may run.
    public let seconds: Double
    /// Bytes of state the query may hold.
    public let memoryLimit: Int
    /// The deadline, moved on by the time the query spent paused for others (``yield``).
    private let deadline: Atomic<UInt64>
    let now: @Sendable () -> UInt64
    private let stopped = Mutex<String?>(nil)
    /// Called at each check from the query's own thread: may block it while other queries take
    /// the turn, and returns the nanoseconds it did (the query's time runs on without them).
    private let yield: (@Sendable () -> UInt64)?

    /// A budget from now: `seconds` on `now` (monotonic nanoseconds; the system's uptime by default).
    /// `yield`, called at each check on the query's thread, may pause it for others' turns.
    public init(
        seconds: Double, memoryLimit: Int,
        now: @escaping @Sendable () -> UInt64 = { DispatchTime.now().uptimeNanoseconds },
        yield: (@Sendable () -> UInt64)? = nil
    ) {
        self.seconds = seconds
        self.memoryLimit = memoryLimit
        self.now = now
        self.yield = yield
        let start = now()
        let span = seconds >= Double(UInt64.max / 2) / 1e9 ? UInt64.max / 2 : UInt64(max(0, seconds) * 1e9)
        deadline = Atomic(start &+ span)
    }

    /// No limit: what tests and the operator's own reports use.
    public static var unlimited: QueryBudget { QueryBudget(seconds: .infinity, memoryLimit: .max) }

    /// Stops the query at its next check, with `reason` (Keen's 503 answer says it).
    public func cancel(_ reason: String) {
        stopped.withLock { if $0 == nil { $0 = reason } }
    }

    /// Why the query was stopped, if it was.
    public var cancellation: String? { stopped.withLock { $0 } }

    /// Throws when the query must stop: cancelled, or past its deadline.
    public func check() throws(KeenError) {
        if let yield {
            let paused = yield()
            if paused > 0 {
                let moved = deadline.load(ordering: .relaxed)
                deadline.store(moved > UInt64.max / 2 ? moved : moved &+ paused, ordering: .relaxed)
            }
        }
        if let reason = cancellation { throw KeenError.cancelled(reason) }
        if now() >= deadline.load(ordering: .relaxed) { throw KeenError.timeout(seconds: seconds) }
    }
}

/// A query's running count of its work and memory, checked against its ``QueryBudget`` every so
/// many steps: reading the clock per row would cost as much as a plain count's scan.
public struct QueryMeter {
    public let budget: QueryBudget
    var steps = 0
    var nextCheck = QueryMeter.stride
    public private(set) var bytes = 0

    /// Steps between two checks of the budget's clock: a row is a step, a regex's state on a
    /// character is one, so a check comes every few milliseconds at most.
    static let stride = 1 << 16

    public init(budget: QueryBudget) {
        self.budget = budget
    }

    /// Counts `count` steps of work; checks the budget when a stride has passed.
    @inline(__always)
    public mutating func tick(_ count: Int = 1) throws(KeenError) {
        steps &+= count
        if steps >= nextCheck {
            nextCheck = steps &+ Self.stride
            try budget.check()
        }
    }

    /// Counts `count` bytes of state the query now holds.
    @inline(__always)
    public mutating func charge(_ count: Int) throws(KeenError) {
        bytes &+= count
        if bytes > budget.memoryLimit {
            throw KeenError.tooMany(
                "the query needs more than \(budget.memoryLimit / 1_048_576) MB of memory; narrow its timeframe or filters, or group by fewer values"
            )
        }
    }
}
