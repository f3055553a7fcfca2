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
package final class AnalyticsQueries: Service, Sendable {
    package let limits: AnalyticsLimits

    private enum Slot {
        case waiting(CheckedContinuation<Void, any Error>)
        case granted
    }

    private struct State {
        var running = 0
        var queue: [UUID] = []
        /// Whose each waiting query is.
        var shares: [UUID: String] = [:]
        /// When each share was last given a turn (a running count).
        var lastTurn: [String: Int] = [:]
        var turns = 0
        var slots: [UUID: Slot] = [:]
        var budgets: [UUID: QueryBudget] = [:]
        var stopping: String?
        var timedOut = 0
        var refused = 0

        /// The waiting query to run next: the first of the share served least recently (one
        /// never served first).
        func nextInLine() -> Int? {
            var best: (index: Int, turn: Int)?
            for (index, id) in queue.enumerated() {
                let turn = lastTurn[shares[id] ?? ""] ?? -1
                if best == nil || turn < best!.turn { best = (index, turn) }
            }
            return best?.index
        }

        mutating func served(_ share: String) {
            turns += 1
            lastTurn[share] = turns
            // Shares with nothing waiting are forgotten once there are many (a forgotten share
            // counts as never served: its next query goes first once).
            if lastTurn.count > 10_000 {
                let waiting = Set(shares.values)
                lastTurn = lastTurn.filter { waiting.contains($0.key) || $0.key == share }
            }
        }
    }

    private let state = Mutex(State())

    package init(limits: AnalyticsLimits = AnalyticsLimits()) {
        self.limits = limits
    }

    /// Runs `body` with a budget of its own once a slot is free: Keen's 429 when none frees within
    /// the wait, 503 once the server is stopping.
    package func run<Value: Sendable>(for share: String = "", _ body: (QueryBudget) async throws -> Value)
        async throws -> Value
    {
        let id = UUID()
        try await acquire(id, share: share)
        let budget = QueryBudget(seconds: limits.querySeconds, memoryLimit: limits.queryMemoryBytes)
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
        let next = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            guard case .granted? = state.slots.removeValue(forKey: id) else { return nil }
            state.budgets[id] = nil
            state.running -= 1
            while let index = state.nextInLine() {
                let waiter = state.queue.remove(at: index)
                let share = state.shares.removeValue(forKey: waiter) ?? ""
                guard case .waiting(let continuation)? = state.slots[waiter] else { continue }
                state.slots[waiter] = .granted
                state.running += 1
                state.served(share)
                return continuation
            }
            return nil
        }
        next?.resume()
    }

    /// Stops every query (at its next check) and every waiter, and refuses new ones.
    package func stopAll(_ reason: String) {
        let (budgets, waiters) = state.withLock { state in
            state.stopping = reason
            let waiters = state.queue.compactMap { id -> CheckedContinuation<Void, any Error>? in
                guard case .waiting(let continuation)? = state.slots[id] else { return nil }
                state.slots[id] = nil
                return continuation
            }
            state.queue.removeAll()
            state.shares.removeAll()
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
