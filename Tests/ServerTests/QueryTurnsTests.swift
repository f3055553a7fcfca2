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

    /// Set once, read from any thread.
    final class Stopped: Sendable {
        private let flag = Mutex(false)
        func stop() { flag.withLock { $0 = true } }
        var now: Bool { flag.withLock { $0 } }
    }

    /// The order queries ran in.
    final class Order: Sendable {
        private let state = Mutex<[String]>([])
        func append(_ name: String) { state.withLock { $0.append(name) } }
        var names: [String] { state.withLock { $0 } }
    }

    /// Runs `first`, holding the only slot until each of `queued` waits its turn (queued in that
    /// order), then lets them run: the order they ran in.
    static func turns(first: (String, String), then queued: [(String, String)]) async throws -> [String] {
        let queries = oneSlot()
        let order = Order()
        let release = Gate()
        func query(_ name: String, share: String) -> Task<Void, any Error> {
            Task {
                try await queries.run(for: share) { _ in
                    order.append(name)
                    if name == first.0 { await release.wait() }
                }
            }
        }
        let head = query(first.0, share: first.1)
        while order.names.isEmpty { await Task.yield() }
        var waiting: [Task<Void, any Error>] = []
        for (name, share) in queued {
            waiting.append(query(name, share: share))
            while queries.counts.waiting < waiting.count { await Task.yield() }
        }
        release.open()
        try await head.value
        for task in waiting { try await task.value }
        return order.names
    }

    @Test(.timeLimit(.minutes(30))) func aWaitingQueryOfAnotherClientGoesBeforeTheBusyClientsNext() async throws {
        // The busy client's first query runs; its next two wait, then another client's one.
        let order = try await Self.turns(first: ("a1", "p a"), then: [("a2", "p a"), ("a3", "p a"), ("b1", "p b")])
        // Before: a1, a2, a3, b1 (first come, first served).
        #expect(order == ["a1", "b1", "a2", "a3"])
    }

    /// Turns for one query at a time, given away after `slice`.
    static func oneSlot(slice: Duration = .milliseconds(20)) -> AnalyticsQueries {
        var limits = AnalyticsLimits()
        limits.concurrentQueries = 1
        // The order of turns is the point, not the wait's limit: on a loaded machine the test's
        // own set-up may take longer than the 10 s a client is kept waiting in service.
        limits.queryWaitSeconds = 600
        // Nor its run's (30 s in service, counted while paused): a full run once stopped two of
        // these queries at 30 s, the machine shared with the heaviest tests.
        limits.querySeconds = 600
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

    @Test(.timeLimit(.minutes(30))) func aLongQueryPausesForAnotherClientsAndGoesOnAfter() async throws {
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

    @Test(.timeLimit(.minutes(30))) func aPausedQueryWhoseClientLeftStops() async throws {
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

    @Test(.timeLimit(.minutes(30))) func aQueryThatIsNotPausableKeepsItsTurn() async throws {
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
    @Test(.timeLimit(.minutes(30))) func aPausedQueryGoesOnBeforeItsOwnClientsNext() async throws {
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

    /// Two clients looping long queries (the hostile benchmark's regex filters) held the one slot
    /// and the one paused place between them: every other client's query waited for one of theirs
    /// to end (10 s, then Keen's 429), the operator's dashboard too (then 400). Now more than one
    /// query may pause, and a third client's query, and the operator's, get a turn within a slice.
    @Test(.timeLimit(.minutes(30))) func twoClientsLoopingLongQueriesDoNotHoldEveryoneElsesTurn() async throws {
        let queries = Self.oneSlot(slice: .milliseconds(1))
        let order = Order()
        let stopped = Stopped()
        func hog(_ share: String) -> Task<Void, any Error> {
            Task {
                try await queries.run(for: share) { budget in
                    try await Self.onThread {
                        order.append("\(share) started")
                        while !stopped.now { try budget.check() }
                    }
                }
            }
        }
        let first = hog("ka a")
        while order.names.isEmpty { await Task.yield() }
        let second = hog("kb b")
        while order.names.count < 2 { await Task.yield() }
        // Both in progress, one paused: another tenant's query, then the operator's, run meanwhile.
        try await queries.run(for: "kc c") { _ in order.append("c ran") }
        try await queries.run(for: AnalyticsQueries.operatorShare) { _ in order.append("operator ran") }
        stopped.stop()
        try await first.value
        try await second.value
        #expect(order.names == ["ka a started", "kb b started", "c ran", "operator ran"])
        #expect(queries.counts.running == 0 && queries.counts.waiting == 0)
    }

    /// Turns go to keys first, then to their clients: a key's clients (or one client with many
    /// addresses) are one tenant's turns; the operator's query goes before every tenant's.
    @Test(.timeLimit(.minutes(30))) func turnsGoByKeyThenClientAndTheOperatorFirst() async throws {
        let order = try await Self.turns(
            first: ("k1-a", "k1 a"),
            then: [("k1-b", "k1 b"), ("k1-c", "k1 c"), ("k2-a", "k2 a"), ("operator", AnalyticsQueries.operatorShare)])
        // Before: k1-b, k1-c, k2-a and the operator, each client its own share.
        #expect(order == ["k1-a", "operator", "k2-a", "k1-b", "k1-c"])
    }
}
