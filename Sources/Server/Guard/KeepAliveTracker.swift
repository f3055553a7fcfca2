import NIOCore
import NIOHTTP1

/// After the HTTP/1.1 decoder: tells the gate when a keep-alive connection has answered every
/// request it read and waits for another (idle: the first to be closed when the server is at
/// its connection cap), and when a request arrives on it again. A connection that asks to switch
/// protocols (a WebSocket) is never idle: it is not looked at after that request.
final class KeepAliveTracker: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private let gate: ConnectionGate
    private let connectionGuard: ConnectionGuardHandler
    /// Requests read whose response has not ended.
    private var unanswered = 0
    private var idle = false
    private var tracking = true

    init(gate: ConnectionGate, connectionGuard: ConnectionGuardHandler) {
        self.gate = gate
        self.connectionGuard = connectionGuard
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if tracking, case .head(let head) = unwrapInboundIn(data) {
            unanswered += 1
            if head.headers.contains(name: "upgrade") { tracking = false }
            if idle, let connection = connectionGuard.connection {
                idle = false
                gate.becameBusy(connection: connection)
            }
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard tracking else {
            context.write(data, promise: promise)
            return
        }
        if case .end = unwrapOutboundIn(data) {
            unanswered = max(0, unanswered - 1)
            if unanswered == 0, !idle, let connection = connectionGuard.connection, let client = connectionGuard.client
            {
                idle = true
                let channel = context.channel
                gate.becameIdle(connection: connection, client: client) { channel.close(promise: nil) }
            }
        }
        context.write(data, promise: promise)
    }
}
