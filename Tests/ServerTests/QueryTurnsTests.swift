import Synchronization
import Testing

@testable import Server

/// Turns to run a Keen query are shared between clients: one that asks query after query delays
/// another's by one query at most, not by its whole backlog.
@Suite struct QueryTurnsTests {
    /// A query held running until released.
    final class Gate: Sendable {
        private let state = Mutex<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

        func wait() async {
            await withCheckedContinuation { continuation in
                let open = state.withLock { state -> Bool in
                    if !state.open { state.waiters.append(continuation) }
                    return state.open
                }
                if open { continuation.resume() }
            }
        }

        func open() {
            let waiters = state.withLock { state in
                state.open = true
                defer { state.waiters = [] }
                return state.waiters
            }
            for waiter in waiters { waiter.resume() }
        }
    }

    /// The order queries ran in.
    final class Order: Sendable {
        private let state = Mutex<[String]>([])
        func append(_ name: String) { state.withLock { $0.append(name) } }
        var names: [String] { state.withLock { $0 } }
    }

    @Test(.timeLimit(.minutes(1))) func aWaitingQueryOfAnotherClientGoesBeforeTheBusyClientsNext() async throws {
        var limits = AnalyticsLimits()
        limits.concurrentQueries = 1
        let queries = AnalyticsQueries(limits: limits)
        let order = Order()
        let release = Gate()
        func query(_ name: String, share: String) -> Task<Void, any Error> {
            Task {
                try await queries.run(for: share) { _ in
                    order.append(name)
                    if name == "a1" { await release.wait() }
                }
            }
        }
        // The busy client's first query runs; its next two wait, then another client's one.
        let first = query("a1", share: "p a")
        while order.names.isEmpty { await Task.yield() }
        let second = query("a2", share: "p a")
        while queries.counts.waiting < 1 { await Task.yield() }
        let third = query("a3", share: "p a")
        while queries.counts.waiting < 2 { await Task.yield() }
        let other = query("b1", share: "p b")
        while queries.counts.waiting < 3 { await Task.yield() }
        release.open()
        for task in [first, second, third, other] { try await task.value }
        // Before: a1, a2, a3, b1 (first come, first served).
        #expect(order.names == ["a1", "b1", "a2", "a3"])
    }
}
