import Analytics
import Foundation
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
        let queries = Self.oneSlot()
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

    /// Turns for one query at a time, given away after `slice`.
    static func oneSlot(slice: Duration = .milliseconds(20)) -> AnalyticsQueries {
        var limits = AnalyticsLimits()
        limits.concurrentQueries = 1
        return AnalyticsQueries(limits: limits, slice: slice)
    }

    /// Runs `work` on a thread of its own, as the stores run the engine's scan.
    static func onThread<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                QueryThread.markCurrent()
                continuation.resume(with: Result { try work() })
            }.start()
        }
    }

    @Test(.timeLimit(.minutes(1))) func aLongQueryPausesForAnotherClientsAndGoesOnAfter() async throws {
        let queries = Self.oneSlot(slice: .milliseconds(1))
        let order = Order()
        let otherDone = Atomic(false)
        // A scan that checks its budget until the other client's query has run: without turns
        // given away it would never end (the other could not start).
        let long = Task {
            try await queries.run(for: "p a") { budget in
                try await Self.onThread {
                    order.append("a started")
                    var checks = 0
                    while !otherDone.load(ordering: .acquiring) {
                        try budget.check()
                        checks += 1
                    }
                    order.append("a ended")
                    return checks
                }
            }
        }
        while order.names.isEmpty { await Task.yield() }
        try await queries.run(for: "p b") { _ in
            order.append("b ran")
            otherDone.store(true, ordering: .releasing)
        }
        let checks = try await long.value
        #expect(order.names == ["a started", "b ran", "a ended"])
        #expect(checks > 0)
        #expect(queries.counts.running == 0 && queries.counts.waiting == 0)
    }

    @Test(.timeLimit(.minutes(1))) func aPausedQueryWhoseClientLeftStops() async throws {
        let queries = Self.oneSlot(slice: .milliseconds(1))
        let order = Order()
        let release = Gate()
        let long = Task {
            try await queries.run(for: "p a") { budget in
                try await Self.onThread {
                    order.append("a started")
                    while true { try budget.check() }
                }
            }
        }
        while order.names.isEmpty { await Task.yield() }
        // Another client's query takes the turn and holds it; the long one waits paused.
        let other = Task {
            try await queries.run(for: "p b") { _ in
                order.append("b ran")
                await release.wait()
            }
        }
        while order.names.count < 2 { await Task.yield() }
        long.cancel()
        // Stopped while paused, it ends without its turn back: "b" still holds the only slot.
        await #expect(throws: KeenError.self) { try await long.value }
        #expect(queries.counts.running == 1)
        release.open()
        try await other.value
        #expect(queries.counts.running == 0 && queries.counts.waiting == 0)
    }

    @Test(.timeLimit(.minutes(1))) func aQueryThatIsNotPausableKeepsItsTurn() async throws {
        let queries = Self.oneSlot(slice: .nanoseconds(1))
        let order = Order()
        let long = Task {
            try await queries.run(pausable: false) { budget in
                try await Self.onThread {
                    order.append("delete started")
                    // Checks its budget many times while another client's query waits.
                    while queries.counts.waiting == 0 { try budget.check() }
                    for _ in 0..<10_000 { try budget.check() }
                    order.append("delete ended")
                }
            }
        }
        while order.names.isEmpty { await Task.yield() }
        try await queries.run(for: "p b") { _ in order.append("b ran") }
        try await long.value
        #expect(order.names == ["delete started", "delete ended", "b ran"])
    }

    /// A paused query goes on before its own client's next one, so it can give its turn away again
    /// (before: the next one ran while it stayed paused, and as only one query pauses at a time,
    /// another client's query waited for the whole of that one).
    @Test(.timeLimit(.minutes(1))) func aPausedQueryGoesOnBeforeItsOwnClientsNext() async throws {
        let queries = Self.oneSlot(slice: .milliseconds(1))
        let order = Order()
        let stop = Atomic(false)
        let long = Task {
            try await queries.run(for: "p a") { budget in
                try await Self.onThread {
                    order.append("a1 started")
                    while !stop.load(ordering: .acquiring) { try budget.check() }
                    order.append("a1 ended")
                }
            }
        }
        while order.names.isEmpty { await Task.yield() }
        let next = Task { try await queries.run(for: "p a") { _ in order.append("a2") } }
        while queries.counts.waiting < 1 { await Task.yield() }
        try await queries.run(for: "p b") { _ in order.append("b1") }
        try await queries.run(for: "p b") { _ in
            order.append("b2")
            stop.store(true, ordering: .releasing)
        }
        try await long.value
        try await next.value
        #expect(order.names == ["a1 started", "b1", "b2", "a1 ended", "a2"])
    }
}
