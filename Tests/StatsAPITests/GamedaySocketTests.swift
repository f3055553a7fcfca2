import Foundation
import NIOCore
import NIOPosix
import Synchronization
import Testing

@testable import StatsAPI

/// The Gameday push socket against a far side that will not speak WebSocket (issue 57, item 4):
/// one that refuses the handshake and goes on sending (it kept buffering what came: +1.2 GB in
/// 100 s), one that never answers. Each ends at once with why, and the far side sees the
/// connection closed: nothing is read after the refusal.
@Suite struct GamedaySocketTests {
    /// A far side on loopback: after the request's head it answers `answer` (if any), then sends
    /// 64 KB after 64 KB as fast as the connection takes them, until it is closed.
    final class FarSide: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer
        let answer: String?
        let closed: EventLoopPromise<Int>
        private let sent = Mutex(0)
        private let answered = Mutex(false)

        init(answer: String?, closed: EventLoopPromise<Int>) {
            self.answer = answer
            self.closed = closed
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            guard let answer, !answered.withLock({ $0 }) else { return }
            answered.withLock { $0 = true }
            context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: answer)), promise: nil)
            flood(context)
        }

        func channelWritabilityChanged(context: ChannelHandlerContext) {
            if answered.withLock({ $0 }) { flood(context) }
            context.fireChannelWritabilityChanged()
        }

        private func flood(_ context: ChannelHandlerContext) {
            let chunk = ByteBuffer(repeating: UInt8(ascii: "x"), count: 65_536)
            while context.channel.isActive && context.channel.isWritable {
                sent.withLock { $0 += chunk.readableBytes }
                context.writeAndFlush(wrapOutboundOut(chunk), promise: nil)
            }
        }

        func channelInactive(context: ChannelHandlerContext) {
            closed.succeed(sent.withLock { $0 })
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            context.close(promise: nil)
        }
    }

    /// Runs a far side answering `answer` and a socket to it; why the socket ended, and the bytes
    /// the far side had sent when it saw the connection closed.
    static func against(_ answer: String?, handshakeTimeout: TimeAmount = .seconds(10)) async throws -> (
        any Error, Int
    ) {
        let group = MultiThreadedEventLoopGroup.singleton
        let closed = group.next().makePromise(of: Int.self)
        let server = try await ServerBootstrap(group: group)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(FarSide(answer: answer, closed: closed))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        defer { server.close(promise: nil) }
        let port = try #require(server.localAddress?.port)
        var socket = GamedaySocket(url: "ws://127.0.0.1:\(port)/api/v1/game/push/subscribe/gameday/631269")
        socket.handshakeTimeout = handshakeTimeout
        var ended: (any Error)?
        do {
            try await socket.run { _ in }
        } catch {
            ended = error
        }
        let sent = try await closed.futureResult.get()
        return (try #require(ended), sent)
    }

    @Test(.timeLimit(.minutes(30))) func aRefusedHandshakeIsClosedAtOnceWhateverFollows() async throws {
        let (error, sent) = try await Self.against("HTTP/1.1 200 OK\r\nContent-Length: 1000000000000\r\n\r\n")
        guard case GamedaySocket.Failure.refused = error else {
            Issue.record("ended by \(error), not as refused")
            return
        }
        // The far side could send what the connection's buffers hold, not gigabytes.
        #expect(sent < 64 * 1_048_576, "\(sent) bytes sent before the socket was closed")
    }

    @Test(.timeLimit(.minutes(30))) func aHandshakeNeverAnsweredEndsAtItsDeadline() async throws {
        let (error, _) = try await Self.against(nil, handshakeTimeout: .milliseconds(300))
        guard case GamedaySocket.Failure.handshakeTimeout = error else {
            Issue.record("ended by \(error), not at the handshake's deadline")
            return
        }
    }
}
