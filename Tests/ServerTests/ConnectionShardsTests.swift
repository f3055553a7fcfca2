import Logging
import ServiceLifecycle
import Synchronization
import Testing

@testable import Server

/// The server's connections run in the shards' groups: handing one over returns at once, a
/// graceful stop waits for every connection handed over, and after the stop a connection runs
/// where it is handed over.
@Suite struct ConnectionShardsTests {
    /// Opens once; every waiter, before or after, goes on.
    actor Latch {
        private var open = false
        private var waiters: [CheckedContinuation<Void, Never>] = []

        func wait() async {
            if open { return }
            await withCheckedContinuation { waiters.append($0) }
        }

        func release() {
            open = true
            for waiter in waiters { waiter.resume() }
            waiters = []
        }
    }

    @Test(.timeLimit(.minutes(30)))
    func connectionsRunInTheShardsAndAGracefulStopWaitsForThem() async throws {
        let shards = ConnectionShards(count: 4)
        let services = ServiceGroup(configuration: .init(services: [shards], logger: Logger(label: "shards-test")))
        let latch = Latch()
        let (started, starting) = AsyncStream<Int>.makeStream()
        let ended = Atomic<Int>(0)
        try await withThrowingTaskGroup { tasks in
            tasks.addTask { try await services.run() }
            // Twenty connections that stay open until released, handed over one after another:
            // were one run where it is handed over, the next would never be.
            for connection in 0..<20 {
                await shards.run {
                    starting.yield(connection)
                    await latch.wait()
                    await Task.yield()
                    ended.add(1, ordering: .relaxed)
                }
            }
            var running = Set<Int>()
            for await connection in started {
                running.insert(connection)
                if running.count == 20 { break }
            }
            await services.triggerGracefulShutdown()
            await latch.release()
            try await tasks.next()
        }
        let endedBeforeTheStop = ended.load(ordering: .relaxed)
        #expect(endedBeforeTheStop == 20, "the graceful stop ended before its connections")
        // Stopped: a connection handed over now runs to its end before the hand-over returns.
        let ranHere = Atomic<Bool>(false)
        await shards.run { ranHere.store(true, ordering: .relaxed) }
        let ran = ranHere.load(ordering: .relaxed)
        #expect(ran)
    }
}
