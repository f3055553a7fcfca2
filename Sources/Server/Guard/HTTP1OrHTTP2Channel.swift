import HummingbirdCore
import HummingbirdHTTP2
import Logging
import NIOCore
import ServiceLifecycle

/// HTTP/1.1 (with the WebSocket upgrade) and HTTP/2 on one port: a client that opens with HTTP/2's
/// connection preface (prior knowledge, `h2c`: `curl --http2-prior-knowledge`, h2load, a proxy in
/// front speaking HTTP/2 to the service) gets HTTP/2 — many live streams on one connection —, any
/// other client HTTP/1.1. The first bytes decide; nothing is read twice or lost.
///
/// A connection is set up (and starts reading) before any byte has arrived, so the choice is made
/// later, by ``PrefaceSniffer`` in the pipeline; ``handle(value:logger:)`` waits for it.
struct HTTP1OrHTTP2Channel<HTTP1: ServerChildChannel>: ServerChildChannel {
    struct Value: ServerChildChannelValue {
        let channel: any Channel
        let chosen: EventLoopFuture<Chosen>
        /// Closes the connection if it has not said which protocol yet (a graceful shutdown: it
        /// has nothing in progress).
        let closeIfUndecided: @Sendable () -> Void
    }

    enum Chosen: Sendable {
        case http1(HTTP1.Value)
        case http2(HTTP2Channel.Value)
    }

    let http1: HTTP1
    let http2: HTTP2Channel
    /// What else an HTTP/1.1 connection's pipeline needs once it is set up (the parser-error
    /// responder after its decoder).
    var configureHTTP1: @Sendable (any Channel) throws -> Void = { _ in }
    /// And an HTTP/2 connection's (the protocol-error watcher at its end).
    var configureHTTP2: @Sendable (any Channel) throws -> Void = { _ in }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            let promise = channel.eventLoop.makePromise(of: Chosen.self)
            let (http1, http2, configureHTTP1, configureHTTP2) = (http1, http2, configureHTTP1, configureHTTP2)
            let sniffer = PrefaceSniffer<Chosen> { isHTTP2 in
                isHTTP2
                    ? http2.setup(channel: channel, logger: logger).flatMapThrowing { value in
                        try configureHTTP2(channel)
                        return Chosen.http2(value)
                    }
                    : http1.setup(channel: channel, logger: logger).flatMapThrowing { value in
                        try configureHTTP1(channel)
                        return Chosen.http1(value)
                    }
            } decided: { result in
                promise.completeWith(result)
            }
            try channel.pipeline.syncOperations.addHandler(sniffer)
            let undecided = NIOLoopBound(sniffer, eventLoop: channel.eventLoop)
            return Value(
                channel: channel, chosen: promise.futureResult,
                closeIfUndecided: {
                    channel.eventLoop.execute {
                        if !undecided.value.isDecided { channel.close(promise: nil) }
                    }
                })
        }
    }

    func handle(value: Value, logger: Logger) async {
        let chosen: Chosen
        do {
            chosen = try await withGracefulShutdownHandler {
                try await value.chosen.get()
            } onGracefulShutdown: {
                value.closeIfUndecided()
            }
        } catch {
            // Closed before it said which protocol, or its pipeline could not be set up.
            logger.debug("connection ended before its protocol was known", metadata: ["error": "\(error)"])
            try? await value.channel.close()
            return
        }
        switch chosen {
        case .http1(let value):
            // A connection the gate answered and closed before its first request was read is
            // logged by the gate; HummingbirdWebSocket's error line for it is not the news.
            await http1.handle(value: value, logger: UpgradeResultLogHandler.wrapping(logger))
        case .http2(let value): await http2.handle(value: value, logger: logger)
        }
    }
}

/// Reads until the bytes are, or cannot be, HTTP/2's 24-byte connection preface; then has the
/// connection's pipeline set up for that protocol behind it, hands it what it read, and leaves.
final class PrefaceSniffer<Chosen: Sendable>: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    static var preface: [UInt8] { Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8) }

    private let configure: (Bool) -> EventLoopFuture<Chosen>
    private let decided: (Result<Chosen, any Error>) -> Void
    private var buffered: ByteBuffer?
    private var done = false
    /// The client half-closed before the protocol was chosen: passed on after what it sent.
    private var inputClosed = false

    /// Whether the protocol is chosen (or the connection ended before).
    var isDecided: Bool { done }

    init(
        configure: @escaping (Bool) -> EventLoopFuture<Chosen>,
        decided: @escaping (Result<Chosen, any Error>) -> Void
    ) {
        self.configure = configure
        self.decided = decided
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !done else {
            context.fireChannelRead(data)
            return
        }
        var bytes = unwrapInboundIn(data)
        if buffered == nil {
            buffered = bytes
        } else {
            buffered!.writeBuffer(&bytes)
        }
        let seen = buffered!.readableBytesView
        let preface = Self.preface
        if !zip(seen, preface).allSatisfy({ $0 == $1 }) {
            decide(http2: false, context: context)
        } else if seen.count >= preface.count {
            decide(http2: true, context: context)
        }
    }

    /// The client stopped sending (the server allows half-closure) before it said enough: with
    /// nothing read the connection just closes; otherwise HTTP/1.1's parser answers what came.
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard !done, let event = event as? ChannelEvent, event == .inputClosed else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        if buffered == nil {
            context.close(promise: nil)
        } else {
            inputClosed = true
            decide(http2: false, context: context)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if !done {
            done = true
            decided(.failure(ChannelError.eof))
        }
        context.fireChannelInactive()
    }

    private func decide(http2: Bool, context: ChannelHandlerContext) {
        done = true
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        configure(http2).whenComplete { result in
            let (handler, context) = loopBound.value
            // The pipeline behind is in place: what was read goes to it, and the sniffer leaves.
            if case .success = result, let bytes = handler.buffered {
                handler.buffered = nil
                context.fireChannelRead(NIOAny(bytes))
                if handler.inputClosed { context.fireUserInboundEventTriggered(ChannelEvent.inputClosed) }
            }
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
            handler.decided(result)
        }
    }
}
