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
    /// What an HTTP/1.1 connection's pipeline gets once set up: the parser-error responder right
    /// after its request decoder.
    static func parserErrorResponder(gate: ConnectionGate) -> @Sendable (any Channel) throws -> Void {
        { channel in
            let decoder = try channel.pipeline.syncOperations.handler(
                type: ByteToMessageHandler<HTTPRequestDecoder>.self)
            try channel.pipeline.syncOperations.addHandler(ParserErrorResponder(gate: gate), position: .after(decoder))
        }
    }
}
