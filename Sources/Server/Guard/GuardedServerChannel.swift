import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1

/// A server's child channel with the gate in front: the connection guard first in every
/// connection's pipeline (on raw bytes), and the parser-error responder right after the HTTP
/// decoder; the rest is the inner channel's (HTTP/1.1 with the WebSocket upgrade).
struct GuardedServerChannel<Inner: ServerChildChannel>: ServerChildChannel {
    typealias Value = Inner.Value

    let inner: Inner
    let gate: ConnectionGate

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        do {
            try channel.pipeline.syncOperations.addHandler(ConnectionGuardHandler(gate: gate), position: .first)
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
        return inner.setup(channel: channel, logger: logger)
    }

    func handle(value: Value, logger: Logger) async {
        await inner.handle(value: value, logger: logger)
    }
}

extension GuardedServerChannel {
    /// What an HTTP/1.1 connection's pipeline gets once set up: right after its request decoder,
    /// the parser-error responder, then the keep-alive tracker.
    static func parserErrorResponder(gate: ConnectionGate) -> @Sendable (any Channel) throws -> Void {
        { channel in
            let operations = channel.pipeline.syncOperations
            let decoder = try operations.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)
            let responder = ParserErrorResponder(gate: gate)
            try operations.addHandler(responder, position: .after(decoder))
            let connectionGuard = try operations.handler(type: ConnectionGuardHandler.self)
            try operations.addHandler(
                KeepAliveTracker(gate: gate, connectionGuard: connectionGuard), position: .after(responder))
        }
    }
}
