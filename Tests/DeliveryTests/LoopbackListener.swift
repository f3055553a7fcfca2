import NIOCore
import NIOPosix
import Synchronization

/// A TCP listener on 127.0.0.1 that counts the connections and bytes it gets and answers anything
/// with `HTTP/1.1 200 OK`: the internal service an SSRF would reach, which must see nothing.
final class LoopbackListener: Sendable {
    private let channel: any Channel
    private let counts: Counts

    final class Counts: Sendable {
        let connections = Atomic<Int>(0)
        let bytes = Atomic<Int>(0)
    }

    private final class Handler: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer
        let counts: Counts
        init(counts: Counts) { self.counts = counts }

        func channelActive(context: ChannelHandlerContext) {
            counts.connections.add(1, ordering: .relaxed)
            context.fireChannelActive()
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            counts.bytes.add(unwrapInboundIn(data).readableBytes, ordering: .relaxed)
            let reply = "HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
            context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: reply)), promise: nil)
        }
    }

    private init(channel: any Channel, counts: Counts) {
        self.channel = channel
        self.counts = counts
    }

    static func start() async throws -> LoopbackListener {
        let counts = Counts()
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(Handler(counts: counts))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return LoopbackListener(channel: channel, counts: counts)
    }

    var port: Int { channel.localAddress?.port ?? 0 }
    var connections: Int { counts.connections.load(ordering: .relaxed) }
    var bytes: Int { counts.bytes.load(ordering: .relaxed) }

    func close() async throws { try await channel.close() }
}
