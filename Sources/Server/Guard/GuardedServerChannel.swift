import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTP2

/// A server's child channel with the gate in front: the connection guard first in every
/// connection's pipeline (on raw bytes), and the parser-error responder right after the HTTP
/// decoder; the rest is the inner channel's (HTTP/1.1 with the WebSocket upgrade).
struct GuardedServerChannel<Inner: ServerChildChannel>: ServerChildChannel {
    typealias Value = Inner.Value

    let inner: Inner
    let gate: ConnectionGate
    /// Where the connections run; `nil`: in the server's own group.
    var shards: ConnectionShards? = nil

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        do {
            try channel.pipeline.syncOperations.addHandler(ConnectionGuardHandler(gate: gate), position: .first)
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
        return inner.setup(channel: channel, logger: logger)
    }

    func handle(value: Value, logger: Logger) async {
        guard let shards else { return await inner.handle(value: value, logger: logger) }
        await shards.run { [inner] in await inner.handle(value: value, logger: logger) }
    }
}

extension GuardedServerChannel {
    /// What an HTTP/1.1 connection's pipeline gets once set up: right after its request decoder,
    /// the parser-error responder, the keep-alive tracker, then the body's pace.
    static func parserErrorResponder(gate: ConnectionGate) -> @Sendable (any Channel) throws -> Void {
        { channel in
            let operations = channel.pipeline.syncOperations
            let decoder = try operations.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)
            let responder = ParserErrorResponder(gate: gate)
            try operations.addHandler(responder, position: .after(decoder))
            let connectionGuard = try operations.handler(type: ConnectionGuardHandler.self)
            let tracker = KeepAliveTracker(gate: gate, connectionGuard: connectionGuard)
            try operations.addHandler(tracker, position: .after(responder))
            try operations.addHandler(
                BodyPaceHandler(
                    gate: gate, client: connectionGuard.client ?? ConnectionGate.clientKey(channel.remoteAddress),
                    connection: connectionGuard.connection),
                position: .after(tracker))
        }
    }

    /// What an HTTP/2 connection's pipeline gets once set up: at its end, the watcher that
    /// counts its protocol errors against its client.
    static func protocolErrorWatcher(gate: ConnectionGate) -> @Sendable (any Channel) throws -> Void {
        { channel in
            let operations = channel.pipeline.syncOperations
            let client =
                try operations.handler(type: ConnectionGuardHandler.self).client
                ?? ConnectionGate.clientKey(channel.remoteAddress)
            // Right after the HTTP/2 handler: the connection manager behind it closes on an error
            // and passes none on.
            let http2 = try operations.handler(type: NIOHTTP2Handler.self)
            try operations.addHandler(ProtocolErrorWatcher(gate: gate, client: client), position: .after(http2))
        }
    }
}

/// Right after an HTTP/2 connection's HTTP/2 handler: a protocol error it reports (a flood of
/// resets, too many streams, a malformed frame: the handler answers with GOAWAY and the
/// connection closes) is a strike against the client at the gate; network errors are not.
final class ProtocolErrorWatcher: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = Any

    private let gate: ConnectionGate
    private let client: String
    private var struck = false

    init(gate: ConnectionGate, client: String) {
        self.gate = gate
        self.client = client
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if !struck, error is any NIOHTTP2Error {
            // One strike a connection, however many errors its end raises.
            struck = true
            gate.struck(client: client, reason: "HTTP/2: \(error)")
        }
        context.fireErrorCaught(error)
    }
}
