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
    /// Called at each check from the query's own thread with the nanoseconds since its turn
    /// began: may block it while other queries take the turn, and returns the nanoseconds it did
    /// (the query's time limit runs on without them).
    private let yield: (@Sendable (UInt64) -> UInt64)?
    /// When the query's current turn began (`now`).
    private let turnStart: Atomic<UInt64>
    /// Whether the query runs on a thread of its own: 0 not known yet, 1 yes, 2 no.
    private let queryThread = Atomic<UInt8>(0)
    private let events = Atomic<Int>(0)

    /// A budget from now: `seconds` on `now` (monotonic nanoseconds; the system's uptime by default).
    /// `yield`, called at each check on a query's own thread (``QueryThread``), may pause it for
    /// others' turns.
    public init(
        seconds: Double, memoryLimit: Int,
        now: @escaping @Sendable () -> UInt64 = { DispatchTime.now().uptimeNanoseconds },
        yield: (@Sendable (UInt64) -> UInt64)? = nil
    ) {
        self.seconds = seconds
        self.memoryLimit = memoryLimit
        self.now = now
        self.yield = yield
        let start = now()
        turnStart = Atomic(start)
        let span = seconds >= Double(UInt64.max / 2) / 1e9 ? UInt64.max / 2 : UInt64(max(0, seconds) * 1e9)
        deadline = Atomic(start &+ span)
    }

    /// No limit: what tests and the operator's own reports use.
    public static var unlimited: QueryBudget { QueryBudget(seconds: .infinity, memoryLimit: .max) }

    /// Stops the query at its next check, with `reason` (Keen's 503 answer says it).
    public func cancel(_ reason: String) {
        stopped.withLock { if $0 == nil { $0 = reason } }
    }

    /// The events the query's scans went through (Keen's `execution_metadata.events_scanned`).
    public var eventsScanned: Int { events.load(ordering: .relaxed) }

    /// Counts `count` more events scanned.
    public func scanned(events count: Int) {
        events.add(count, ordering: .relaxed)
    }

    /// Why the query was stopped, if it was.
    public var cancellation: String? { stopped.withLock { $0 } }

    /// Whether the query runs on a thread of its own, read once on its thread (at its first check).
    private var onQueryThread: Bool {
        switch queryThread.load(ordering: .relaxed) {
        case 1: return true
        case 2: return false
        default:
            let own = QueryThread.isCurrent
            queryThread.store(own ? 1 : 2, ordering: .relaxed)
            return own
        }
    }

    /// Throws when the query must stop: cancelled, or past its deadline.
    public func check() throws(KeenError) {
        // Only on a thread of its own may a query wait for a turn: blocking another (a store's
        // serial queue, say) could hold what the query it gave its turn to needs.
        if let yield, onQueryThread,
            case let paused = yield(now() &- turnStart.load(ordering: .relaxed)), paused > 0
        {
            turnStart.store(now(), ordering: .relaxed)
            let moved = deadline.load(ordering: .relaxed)
            deadline.store(moved > UInt64.max / 2 ? moved : moved &+ paused, ordering: .relaxed)
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
    /// Events read by the scans.
    public internal(set) var rows = 0

    /// Steps between two checks of the budget: a row is a step, a regex's state on a character
    /// is one, so a check comes every few tens of microseconds of work (a clock read and a lock
    /// there cost under 1 % of it) and a query gives its turn away soon after its slice even
    /// when its lowered priority leaves it little of a busy machine's CPU.
    static let stride = 1 << 12

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

    /// Counts one event read by a scan, a step of work.
    @inline(__always)
    public mutating func row() throws(KeenError) {
        rows &+= 1
        try tick()
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

/// A thread the store started for one query (and ends with it), holding nothing another query
/// needs but the store's reader it reads with: the only kind a query pauses on for another's
/// turn.
public enum QueryThread {
    private static let key = "nohit.query-thread"

    /// Marks the calling thread as a query's own.
    public static func markCurrent() {
        Thread.current.threadDictionary[key] = true
    }

    /// Whether the calling thread is a query's own.
    public static var isCurrent: Bool {
        Thread.current.threadDictionary[key] as? Bool ?? false
    }
}
