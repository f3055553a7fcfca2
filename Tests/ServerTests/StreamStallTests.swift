import Foundation
import NIOPosix
import Testing

@testable import Server

/// A live-stream client that never reads: once its buffers are full and its connection has stayed
/// unwritable longer than the stall timeout, the connection is closed (it would otherwise hold its buffers and
/// its slot for as long as the server runs); a client that reads is left alone.
@Suite struct StreamStallTests {
    typealias Fixture = APIServerTests.Fixture

    @Test(.timeLimit(.minutes(30))) func aClientThatNeverReadsIsClosedAndOneThatReadsIsNot() async throws {
        var fixture = try await Fixture { _ in true }
        defer { fixture.remove() }
        // A minute: a reading client on a loaded machine (a full test run beside a build, whose
        // threads CI once starved for over a minute) is never that far behind.
        let stalls = StreamStallWatch(timeout: .seconds(60), interval: .milliseconds(100))
        fixture.options.stalls = stalls
        let feed = fixture.feed
        try await fixture.live { client in
            let port = try #require(client.port)
            let sweep = Task {
                try await StreamStallSweep(watch: stalls).sweepUntilCancelled()
            }
            defer { sweep.cancel() }
            // One that never reads (a 4 KB receive buffer, reading off), one that reads everything.
            let (silentChannel, silent) = try await LoopStreamTests.Reader.open(port: port, paused: true) { _ in false }
            let (readerChannel, _) = try await LoopStreamTests.Reader.open(port: port) { _ in false }
            await feed.clientCount(reaches: { $0 == 2 })
            // 8 MB of moments (never coalesced), more than the silent client's socket buffers
            // hold (its 4 KB, the server's send buffer of at most 4 MB here: tcp_wmem): the
            // connection is unwritable, and after a minute it is closed.
            let moment = String(repeating: "x", count: 64 * 1024)
            for _ in 0..<128 { _ = feed.publish(.moment, data: moment) }
            await stalls.closedCount(reaches: 1)
            // The one closed is the silent client: the reading one is still connected.
            #expect(readerChannel.isActive, "the reading client was closed")
            if readerChannel.isActive {
                // The silent client, reading at last, gets what its buffers held, then the end.
                try await silentChannel.setOption(.autoRead, value: true).get()
                let received = try await silent.finished.futureResult.get()
                #expect(!received.isEmpty)
                await feed.clientCount(reaches: { $0 == 1 })
            }
            #expect(stalls.closedCount == 1)
            try await readerChannel.close()
            try? await silentChannel.close()
        }
    }
}
