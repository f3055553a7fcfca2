import Foundation
import NIOCore
import NIOPosix
import Testing

@testable import Server

/// A live-stream client that never reads: once its buffers are full and its connection has stayed
/// unwritable longer than the stall timeout, the connection is closed (it would otherwise hold its buffers and
/// its slot for as long as the server runs); a client that reads is left alone.
@Suite struct StreamStallTests {
    typealias Fixture = APIServerTests.Fixture

    /// Opens a connection that asks for the SSE stream and never reads (a 4 KB receive buffer,
    /// reading off), or one that reads everything, counting the bytes.
    final class StreamClient: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = ByteBuffer
        let closed: EventLoopPromise<Void>
        private(set) var received = 0

        init(eventLoop: any EventLoop) { closed = eventLoop.makePromise() }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            received += unwrapInboundIn(data).readableBytes
        }

        func channelInactive(context: ChannelHandlerContext) { closed.succeed() }

        static func open(port: Int, reading: Bool) async throws -> (any Channel, StreamClient) {
            let eventLoop = MultiThreadedEventLoopGroup.singleton.next()
            let client = StreamClient(eventLoop: eventLoop)
            let channel = try await ClientBootstrap(group: eventLoop)
                .channelOption(.socketOption(.so_rcvbuf), value: reading ? 1 << 20 : 4096)
                .channelOption(.autoRead, value: reading)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(client) }
                }
                .connect(host: "127.0.0.1", port: port).get()
            try await channel.writeAndFlush(
                ByteBuffer(string: "GET /api/stream HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n"))
            return (channel, client)
        }
    }

    @Test(.timeLimit(.minutes(2))) func aClientThatNeverReadsIsClosedAndOneThatReadsIsNot() async throws {
        var fixture = try await Fixture { _ in true }
        defer { fixture.remove() }
        // Ten seconds: a reading client on a loaded machine (a full test run beside a build) is
        // never that far behind.
        let stalls = StreamStallWatch(timeout: .seconds(10), interval: .milliseconds(100))
        fixture.options.stalls = stalls
        let feed = fixture.feed
        try await fixture.live { client in
            let port = try #require(client.port)
            let sweep = Task {
                try await StreamStallSweep(watch: stalls).sweepUntilCancelled()
            }
            defer { sweep.cancel() }
            let (silentChannel, silent) = try await StreamClient.open(port: port, reading: false)
            let (readerChannel, _) = try await StreamClient.open(port: port, reading: true)
            await feed.clientCount(reaches: { $0 == 2 })
            // 8 MB of moments (never coalesced), more than the silent client's socket buffers
            // hold (its 4 KB, the server's send buffer of at most 4 MB here: tcp_wmem): the
            // connection is unwritable, and after ten seconds it is closed.
            let moment = String(repeating: "x", count: 64 * 1024)
            for _ in 0..<128 { _ = feed.publish(.moment, data: moment) }
            await stalls.closedCount(reaches: 1)
            // The one closed is the silent client: the reading one is still connected.
            #expect(readerChannel.isActive, "the reading client was closed")
            if readerChannel.isActive {
                // The silent client, reading at last, gets what its buffers held, then the end.
                try await silentChannel.setOption(.autoRead, value: true).get()
                try await silent.closed.futureResult.get()
                #expect(silent.received > 0)
                await feed.clientCount(reaches: { $0 == 1 })
            }
            #expect(stalls.closedCount == 1)
            try await readerChannel.close()
            try? await silentChannel.close()
        }
    }
}
