import NIOCore

/// The first handler of every connection, on raw bytes: admits the connection through the gate
/// (or answers 503 and closes it), and closes it with 408 if its first request head has not
/// arrived within the header timeout (or 431 if it runs past the size limit first). After the
/// first head the HTTP decoder's limits and the idle timeout take over.
final class ConnectionGuardHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let gate: ConnectionGate
    private(set) var client: String?
    /// The connection's number at the gate, once admitted.
    private(set) var connection: Int?
    private var timer: Scheduled<Void>?
    /// When a fifth of the header time has gone without a head: the connection is then as idle
    /// as a keep-alive one waiting for its next request (the first closed at the cap).
    private var stale: Scheduled<Void>?
    private var staleAtGate = false
    private var seenHead = false
    private var headBytes = 0
    /// The last bytes read, to find a head's blank line across reads.
    private var last: UInt32 = 0
    private var closing = false

    init(gate: ConnectionGate) {
        self.gate = gate
    }

    func channelActive(context: ChannelHandlerContext) {
        context.fireChannelActive()
        switch gate.admit(context.channel.remoteAddress) {
        case .refused(let reason):
            refuse(context, status: "503 Service Unavailable", extra: "retry-after: 5\r\n", reason: reason)
        case .admitted(let client, let connection):
            self.client = client
            self.connection = connection
            let timeout = gate.limits.headerTimeout
            let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            // 10,000 sockets holding half a request head each held slots no one could take back
            // for 10 s at a time (14 % of real requests 503 at the cap).
            let slow = TimeAmount.nanoseconds(Int64(Double(timeout.nanoseconds) * gate.limits.slowShare))
            stale = context.eventLoop.scheduleTask(in: slow) {
                let (handler, context) = loopBound.value
                guard !handler.seenHead, !handler.closing else { return }
                handler.staleAtGate = true
                let channel = context.channel
                handler.gate.becameIdle(connection: connection, client: client, reason: .slowHead) {
                    channel.close(promise: nil)
                }
            }
            timer = context.eventLoop.scheduleTask(in: timeout) {
                let (handler, context) = loopBound.value
                guard !handler.seenHead else { return }
                handler.gate.timedOut(
                    client: handler.client ?? ConnectionGate.clientKey(context.channel.remoteAddress),
                    reason: "no request within \(timeout)")
                handler.refuse(
                    context, status: "408 Request Timeout", extra: "", reason: "no request within \(timeout)")
            }
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !closing else { return }
        if !seenHead {
            let buffer = unwrapInboundIn(data)
            buffer.withUnsafeReadableBytes { bytes in
                for byte in bytes where !seenHead {
                    headBytes += 1
                    last = last << 8 | UInt32(byte)
                    if last == 0x0D0A_0D0A { seenHead = true }
                }
            }
            if seenHead {
                timer?.cancel()
                timer = nil
                stale?.cancel()
                stale = nil
                if staleAtGate, let connection {
                    staleAtGate = false
                    gate.becameBusy(connection: connection, reason: .slowHead)
                }
            } else if headBytes > gate.limits.maxHeaderBytes + 8 * 1024 {
                // The decoder answers 431 at the limit; a head with no line ends never reaches it.
                gate.malformed(
                    client: client ?? ConnectionGate.clientKey(context.channel.remoteAddress), status: "431",
                    reason: "a request head of more than \(gate.limits.maxHeaderBytes + 8 * 1024) bytes without its end"
                )
                refuse(context, status: "431 Request Header Fields Too Large", extra: "", reason: "head too large")
                return
            }
        }
        context.fireChannelRead(data)
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        stale?.cancel()
        stale = nil
        if let client, let connection {
            gate.release(client: client, connection: connection)
            self.client = nil
        }
        context.fireChannelInactive()
    }

    /// The security headers every response carries, as header lines.
    static let securityHeaderLines = HardeningMiddleware<APIRequestContext>.securityHeaders.map {
        "\($0.name): \($0.value)\r\n"
    }
    .joined()

    /// Answers with `status` and closes; nothing read after is passed on.
    private func refuse(_ context: ChannelHandlerContext, status: String, extra: String, reason: String) {
        guard !closing else { return }
        closing = true
        timer?.cancel()
        timer = nil
        stale?.cancel()
        stale = nil
        let body = "{\"error\":{\"message\":\"\(reason)\"}}"
        let text =
            "HTTP/1.1 \(status)\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: "
            + "\(body.utf8.count)\r\nconnection: close\r\n\(extra)\(Self.securityHeaderLines)\r\n\(body)"
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: text)), promise: nil)
        Self.closeLingering(context)
    }

    /// Closes the way out, then the connection once the client has stopped sending (or after two
    /// seconds): closing with unread bytes would reset the connection, and a client still sending
    /// could lose the answer with it.
    static func closeLingering(_ context: ChannelHandlerContext) {
        let channel = context.channel
        context.close(mode: .output, promise: nil)
        channel.eventLoop.scheduleTask(in: .seconds(2)) { channel.close(promise: nil) }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if closing, let event = event as? ChannelEvent, event == .inputClosed {
            context.close(promise: nil)
        }
        context.fireUserInboundEventTriggered(event)
    }
}
