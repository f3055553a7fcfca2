import Foundation
import NIOCore
import NIOPosix
import Synchronization
import Testing

@testable import Server

/// When the server's event loop is short of CPU, a WebSocket client's writes do not pile up on it:
/// after a few batches the client waits for its loop, and what comes meanwhile is coalesced in its
/// subscription (the latest state of each game, every moment), so what it reads lags by a few
/// batches, not by a backlog that grows with every event. (Server-Sent Events are written from the
/// loop itself, `LoopStreamTests`.)
@Suite struct StreamPacingTests {
    typealias Fixture = APIServerTests.Fixture

    /// An event loop held busy until released (a loop short of CPU, at its extreme).
    final class HeldLoop: Sendable {
        private let release = DispatchSemaphore(value: 0)

        /// Returns once `loop` is running the task that holds it.
        init(_ loop: any EventLoop) async {
            await withCheckedContinuation { (held: CheckedContinuation<Void, Never>) in
                loop.execute { [release] in
                    held.resume()
                    release.wait()
                }
            }
        }

        func free() { release.signal() }
    }

    @Test(.timeLimit(.minutes(30))) func aClientWaitsOnceLimitBatchesAreQueuedAndGoesOnWhenTheLoopRunsThem()
        async throws
    {
        let loops = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = loops.next()
        let pacing = StreamPacing(limit: 2)
        let held = await HeldLoop(loop)
        let done = ManagedFlag()
        let client = Task {
            var pacer = pacing.pacer(on: loop)
            await pacer.queuedBatch()
            // One batch queued: the client goes on.
            #expect(pacing.waitCount == 0)
            await pacer.queuedBatch()
            done.set()
        }
        // Two batches queued on a loop that runs nothing: the client waits...
        while pacing.waitCount == 0 { await Task.yield() }
        #expect(!done.isSet, "the client went on with two batches queued on a held loop")
        // ...until the loop has run them.
        held.free()
        await client.value
        #expect(done.isSet)
        #expect(pacing.waitCount == 1)
        try await loops.shutdownGracefully()
    }

    /// A flag set once, read from any thread.
    final class ManagedFlag: Sendable {
        private let value = Mutex(false)
        func set() { value.withLock { $0 = true } }
        var isSet: Bool { value.withLock { $0 } }
    }
}
