import NIOCore
import NIOHTTP1

/// After the HTTP/1.1 decoder: a request body must keep coming. Once `limits.bodyTimeout` has
/// passed since its head, a body that has brought less than `limits.minimumBodyRate` bytes a
/// second since then (and is not whole) has its connection closed, counted as a timeout at the
/// gate, as nginx's `client_body_timeout` does: a request in progress does not make a connection
/// that trickles a byte every few seconds immune to every other limit. Before that, from a fifth of
/// the time on, a body slower than the pace so far makes its connection one the gate may close
/// first at its cap, as an idle one (2,000 trickled bodies held their slots while real clients
/// were refused).
final class BodyPaceHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private let gate: ConnectionGate
    private let client: String
    /// The connection's number at the gate.
    private let connection: Int?
    /// Whether the gate was told this body's connection may be closed first.
    private var idleAtGate = false
    /// The body being read: when its head came, and the bytes since.
    private var started: NIODeadline?
    private var received = 0
    private var check: RepeatedTask?
    private var switched = false

    init(gate: ConnectionGate, client: String, connection: Int?) {
        self.gate = gate
        self.client = client
        self.connection = connection
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // A connection that switched protocols (a WebSocket) is not HTTP after its 101.
        guard !switched else { return context.fireChannelRead(data) }
        switch unwrapInboundIn(data) {
        case .head(let head):
            let declared = head.headers.first(name: "content-length").flatMap { Int($0) } ?? 0
            if declared > 0 || head.headers.contains(name: "transfer-encoding") { start(context) }
        case .body(let buffer):
            received += buffer.readableBytes
        case .end:
            stop()
        }
        context.fireChannelRead(data)
    }

    /// A 101 going out: the connection is another protocol's from now on (a request that merely
    /// asks to upgrade and is answered as HTTP keeps its body's pace looked at, and so do the
    /// requests after it).
    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if !switched, case .head(let head) = unwrapOutboundIn(data), head.status == .switchingProtocols {
            switched = true
            stop()
        }
        context.write(data, promise: promise)
    }

    func channelInactive(context: ChannelHandlerContext) {
        stop()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        stop()
    }

    private func start(_ context: ChannelHandlerContext) {
        stop()
        started = .now()
        received = 0
        let every = TimeAmount.milliseconds(max(100, min(1_000, gate.limits.bodyTimeout.nanoseconds / 4_000_000)))
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let first = TimeAmount.nanoseconds(Int64(Double(gate.limits.bodyTimeout.nanoseconds) * gate.limits.slowShare))
        check = context.eventLoop.scheduleRepeatedTask(initialDelay: first, delay: every) { _ in
            let (handler, context) = loopBound.value
            handler.look(context)
        }
    }

    private func stop() {
        check?.cancel()
        check = nil
        started = nil
        if idleAtGate, let connection {
            idleAtGate = false
            gate.becameBusy(connection: connection, reason: .slowBody)
        }
    }

    /// Whether the body is behind its pace now; the connection is closed if so.
    private func look(_ context: ChannelHandlerContext) {
        guard let started else { return }
        let elapsed = NIODeadline.now() - started
        let late = elapsed - gate.limits.bodyTimeout
        guard late > .zero else {
            // Within the time, but behind the pace so far: closed first at the cap.
            let pace = Int64(gate.limits.minimumBodyRate) * elapsed.nanoseconds / 1_000_000_000
            if !idleAtGate, Int64(received) < pace, let connection {
                idleAtGate = true
                let channel = context.channel
                gate.becameIdle(connection: connection, client: client, reason: .slowBody) {
                    channel.close(promise: nil)
                }
            }
            return
        }
        let owed = Int64(gate.limits.minimumBodyRate) * late.nanoseconds / 1_000_000_000
        guard Int64(received) < owed else { return }
        stop()
        gate.timedOut(
            client: client,
            reason:
                "a request body slower than \(gate.limits.minimumBodyRate) bytes a second after \(gate.limits.bodyTimeout.nanoseconds / 1_000_000_000) s (\(received) bytes)"
        )
        context.close(promise: nil)
    }
}
