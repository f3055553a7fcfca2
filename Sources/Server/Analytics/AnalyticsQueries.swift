import Analytics
import Foundation
import ServiceLifecycle
import Synchronization

/// The Keen API's queries in progress: at most `concurrent` run at once (the others wait their
/// turn, at most `waitSeconds`, then get Keen's 429; a turn goes to the waiting query whose
/// share — a project's client — was served least recently, so one client asking query after
/// query delays another's by one query at most), each with a budget of time and memory that
/// the engine checks inside its scan; graceful shutdown stops every one of them (and refuses new
/// ones), so a stopping server is not held by a query.
///
/// Turns are time-sliced: a query that has had its turn for `slice` while another client's query
/// waits pauses at its next check (on its own thread, which the engine's scan runs on) and hands
/// its slot over, then goes on when a slot comes back, its time limit moved on by the pause. So a
/// client's small query waits for a slice, not for another client's long one to end. At most
/// `maximumPaused` queries are paused at once, so the threads and store readers in use stay within
/// the slots and as many more (SQLite's analytics pool has readers for every slot the settings
/// allow and those); a query pauses only on a thread the store gave it alone. With one paused
/// query, two clients looping 30-s queries took that place and the slot in turn, and everyone
/// else waited for one of theirs to end (Keen's 429 after 10 s).
///
/// A share is a key and a client: turns go first to the key served least recently, then within
/// it to the client, so clients sharing a key (or one client with many addresses behind it) are
/// one tenant's turns, not one each. The operator's own queries (the dashboard) go before any
/// tenant's.
package final class AnalyticsQueries: Service, Sendable {
    package let limits: AnalyticsLimits
    /// How long a query runs before it gives its turn to another client's waiting query.
    package let slice: Duration
    private let sliceNanoseconds: UInt64

    private enum Slot {
        case waiting(CheckedContinuation<Void, any Error>)
        /// A query that gave its turn away, blocked on its thread until `release` signals it.
        case paused(DispatchSemaphore)
        case granted
    }

    private struct State {
        var running = 0
        var queue: [UUID] = []
        /// Whose each query is, waiting, running or paused.
        var shares: [UUID: String] = [:]
        /// When each share was last given a turn (a running count).
        var lastTurn: [String: Int] = [:]
        var turns = 0
        var slots: [UUID: Slot] = [:]
        /// Queries paused now (at most `maximumPaused`).
        var paused = 0
        var budgets: [UUID: QueryBudget] = [:]
        var stopping: String?
        var timedOut = 0
        var refused = 0

        /// The waiting query to run next: the operator's first, then the first of the key served
        /// least recently (one never served first), and within it of the client served least
        /// recently, other than `share`'s when given; of that share, the paused query before any
        /// other (so that it can give its turn away again, and no query stays paused behind its
        /// own client's next ones).
        func nextInLine(besides share: String? = nil) -> Int? {
            var best: (index: Int, turn: (Int, Int), paused: Bool)?
            for (index, id) in queue.enumerated() {
                let owner = shares[id] ?? ""
                if let share, owner == share { continue }
                let key = AnalyticsQueries.key(of: owner)
                let turn =
                    owner == AnalyticsQueries.operatorShare
                    ? (-2, -2) : (lastTurn[key] ?? -1, lastTurn[owner] ?? -1)
                var paused = false
                if case .paused? = slots[id] { paused = true }
                if let current = best, turn > current.turn || (turn == current.turn && (current.paused || !paused)) {
                    continue
                }
                best = (index, turn, paused)
            }
            return best?.index
        }

        /// Gives the slot to the waiting query at `index`; its continuation to resume, or its
        /// semaphore to signal (a paused query), outside the lock.
        mutating func grant(at index: Int) -> Wake? {
            let waiter = queue.remove(at: index)
            let share = shares[waiter] ?? ""
            let wake: Wake
            switch slots[waiter] {
            case .waiting(let continuation)?: wake = .resume(continuation)
            case .paused(let semaphore)?:
                wake = .signal(semaphore)
                paused -= 1
            default: return nil
            }
            slots[waiter] = .granted
            running += 1
            served(share)
            return wake
        }

        mutating func served(_ share: String) {
            turns += 1
            lastTurn[share] = turns
            lastTurn[AnalyticsQueries.key(of: share)] = turns
            // Shares with no query are forgotten once there are many (a forgotten share
            // counts as never served: its next query goes first once).
            if lastTurn.count > 10_000 {
                let waiting = Set(shares.values.flatMap { [$0, AnalyticsQueries.key(of: $0)] })
                lastTurn = lastTurn.filter {
                    waiting.contains($0.key) || $0.key == share || $0.key == AnalyticsQueries.key(of: share)
                }
            }
        }
    }

    private enum Wake {
        case resume(CheckedContinuation<Void, any Error>)
        case signal(DispatchSemaphore)

        func callAsFunction() {
            switch self {
            case .resume(let continuation): continuation.resume()
            case .signal(let semaphore): semaphore.signal()
            }
        }
    }

    private let state = Mutex(State())

    /// Queries paused at once, at most (each holds its thread and a store reader).
    package static let maximumPaused = 4
    /// The share of the operator's own queries (the dashboard): served before any tenant's.
    package static let operatorShare = "operator"

    /// A share names its key and its client, as "key client"; the key is its first word.
    package static func share(key: String, client: String) -> String { "\(key) \(client)" }
    static func key(of share: String) -> String {
        share.firstIndex(of: " ").map { String(share[..<$0]) } ?? share
    }

    package init(limits: AnalyticsLimits = AnalyticsLimits(), slice: Duration = .milliseconds(20)) {
        self.limits = limits
        self.slice = slice
        sliceNanoseconds = UInt64(
            max(0, slice.components.seconds) * 1_000_000_000 + max(0, slice.components.attoseconds / 1_000_000_000))
    }

    private static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    /// Runs `body` with a budget of its own once a slot is free: Keen's 429 when none frees within
    /// the wait, 503 once the server is stopping. A query that holds the store's writer (a delete)
    /// is not `pausable`: it keeps its turn to the end.
    package func run<Value: Sendable>(
        for share: String = "", pausable: Bool = true, _ body: (QueryBudget) async throws -> Value
    ) async throws -> Value {
        let id = UUID()
        try await acquire(id, share: share)
        var yield: (@Sendable (UInt64) -> UInt64)?
        if pausable { yield = { @Sendable [weak self] ran in self?.yieldTurn(id, ran: ran) ?? 0 } }
        let budget = QueryBudget(seconds: limits.querySeconds, memoryLimit: limits.queryMemoryBytes, yield: yield)
        let stopping = state.withLock { state -> String? in
            state.budgets[id] = budget
            return state.stopping
        }
        if let stopping { budget.cancel(stopping) }
        defer { release(id) }
        do {
            return try await withTaskCancellationHandler {
                try await body(budget)
            } onCancel: {
                budget.cancel("the request was cancelled")
            }
        } catch let error as KeenError where error.status == 504 {
            state.withLock { $0.timedOut += 1 }
            throw error
        }
    }

    /// Queries running now and waiting; those stopped at their time limit and refused a turn so far.
    package var counts: (running: Int, waiting: Int, timedOut: Int, refused: Int) {
        state.withLock { ($0.running, $0.queue.count, $0.timedOut, $0.refused) }
    }

    private func acquire(_ id: UUID, share: String) async throws {
        let wait = limits.queryWaitSeconds
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await self.waitForSlot(id, share: share) }
                group.addTask {
                    try await Task.sleep(for: .milliseconds(Int64(wait * 1000)))
                    throw KeenError.rateLimited(
                        "\(self.limits.concurrentQueries) queries are running and none finished within \(Int(wait)) s; try again shortly"
                    )
                }
                defer { group.cancelAll() }
                try await group.next()
            }
        } catch {
            // Granted just as the wait ended: the slot goes back.
            let granted = state.withLock { state -> Bool in
                if case .granted? = state.slots[id] { return true }
                return false
            }
            if granted { release(id) }
            if error is KeenError { state.withLock { $0.refused += 1 } }
            throw error
        }
    }

    private func waitForSlot(_ id: UUID, share: String) async throws {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome = state.withLock { state -> Result<Bool, KeenError> in
                    if let stopping = state.stopping { return .failure(.cancelled(stopping)) }
                    if state.running < limits.concurrentQueries && state.queue.isEmpty {
                        state.running += 1
                        state.slots[id] = .granted
                        state.shares[id] = share
                        state.served(share)
                        return .success(true)
                    }
                    state.queue.append(id)
                    state.shares[id] = share
                    state.slots[id] = .waiting(continuation)
                    return .success(false)
                }
                switch outcome {
                case .success(true): continuation.resume()
                case .success(false): break
                case .failure(let error): continuation.resume(throwing: error)
                }
            }
        } onCancel: {
            let continuation = state.withLock { state -> CheckedContinuation<Void, any Error>? in
                guard case .waiting(let continuation)? = state.slots[id] else { return nil }
                state.slots[id] = nil
                state.queue.removeAll { $0 == id }
                state.shares[id] = nil
                return continuation
            }
            continuation?.resume(throwing: CancellationError())
        }
    }

    private func release(_ id: UUID) {
        let next = state.withLock { state -> Wake? in
            state.budgets[id] = nil
            switch state.slots.removeValue(forKey: id) {
            case .granted?: break
            case .paused?:
                // A query stopped while paused gave its slot away already.
                state.queue.removeAll { $0 == id }
                state.shares[id] = nil
                state.paused -= 1
                return nil
            default: return nil
            }
            state.shares[id] = nil
            state.running -= 1
            while let index = state.nextInLine() {
                if let wake = state.grant(at: index) { return wake }
            }
            return nil
        }
        next?()
    }

    /// At a check of query `id`'s budget, on its thread, `ran` nanoseconds after its turn began:
    /// when that is its slice and another client's query waits (and fewer than `maximumPaused`
    /// are paused already),
    /// gives that one the slot and blocks until a slot comes back or the query is stopped.
    /// Returns the nanoseconds it waited.
    private func yieldTurn(_ id: UUID, ran: UInt64) -> UInt64 {
        guard ran >= sliceNanoseconds else { return 0 }
        let start = Self.now()
        let paused = state.withLock { state -> (Wake, DispatchSemaphore)? in
            guard state.paused < Self.maximumPaused, state.stopping == nil, case .granted? = state.slots[id],
                let owner = state.shares[id], state.budgets[id]?.cancellation == nil
            else { return nil }
            var wake: Wake?
            while wake == nil, let index = state.nextInLine(besides: owner) {
                wake = state.grant(at: index)
            }
            guard let wake else { return nil }
            let semaphore = DispatchSemaphore(value: 0)
            state.slots[id] = .paused(semaphore)
            state.running -= 1
            state.queue.append(id)
            state.paused += 1
            return (wake, semaphore)
        }
        guard case let (handed, semaphore)? = paused else { return 0 }
        handed()
        // Paused: until release() gives the slot back, or the query is stopped (its client left,
        // the server is stopping), looked at every 50 ms.
        while semaphore.wait(timeout: .now() + .milliseconds(50)) == .timedOut {
            let gaveUp = state.withLock { state -> Bool in
                // No slot at all: taken out by a release or a stop meanwhile; it waits for nothing.
                guard let slot = state.slots[id] else { return true }
                guard case .paused = slot, state.budgets[id]?.cancellation != nil else { return false }
                state.slots[id] = nil
                state.queue.removeAll { $0 == id }
                state.shares[id] = nil
                state.paused -= 1
                return true
            }
            if gaveUp { break }
        }
        return Self.now() &- start
    }

    /// Stops every query (at its next check) and every waiter, and refuses new ones.
    package func stopAll(_ reason: String) {
        let (budgets, waiters) = state.withLock { state in
            state.stopping = reason
            // A paused query stays in its slot's place: its budget is cancelled below, and it
            // sees so within 50 ms.
            let waiters = state.queue.compactMap { id -> CheckedContinuation<Void, any Error>? in
                guard case .waiting(let continuation)? = state.slots[id] else { return nil }
                state.slots[id] = nil
                state.shares[id] = nil
                return continuation
            }
            let slots = state.slots
            state.queue.removeAll { if case .paused? = slots[$0] { false } else { true } }
            return (Array(state.budgets.values), waiters)
        }
        for budget in budgets { budget.cancel(reason) }
        for waiter in waiters { waiter.resume(throwing: KeenError.cancelled(reason)) }
    }

    /// Waits for graceful shutdown, then stops every query.
    package func run() async throws {
        try? await gracefulShutdown()
        stopAll("the server is stopping")
    }
}
