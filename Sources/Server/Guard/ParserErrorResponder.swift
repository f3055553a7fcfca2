import NIOCore
import NIOHTTP1

/// Right after the HTTP decoder: a request the decoder cannot read (a malformed request line,
/// `Content-Length` with chunked encoding, a head past the size or field-count limit) is answered
/// 400 or 431 and the connection closed — not left open with no answer. So is an HTTP/1.1
/// request without `Host` (400), which RFC 9112 says a server must refuse.
final class ParserErrorResponder: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let gate: ConnectionGate
    private var answered = false
    /// Until a request asks to switch protocols.
    private var readingHTTP = true

    init(gate: ConnectionGate) {
        self.gate = gate
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // Once answered, the rest of what the client sent is not read: the connection closes.
        guard !answered else { return }
        // After a WebSocket upgrade what comes is frames, not HTTP: only HTTP is looked at.
        if readingHTTP, case .head(let head) = unwrapInboundIn(data) {
            if head.version == .http1_1 && !head.headers.contains(name: "host") {
                answer(
                    context, status: .badRequest, message: "an HTTP/1.1 request must have a Host header (RFC 9112, 3.2)"
                )
                return
            }
            if head.headers.contains(name: "upgrade") { readingHTTP = false }
        }
        context.fireChannelRead(data)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let parserError = error as? HTTPParserError else {
            context.fireErrorCaught(error)
            return
        }
        guard !answered else { return }
        let tooLarge = parserError == .headerOverflow
        let message =
            tooLarge
            ? "the request head is larger than \(gate.limits.maxHeaderBytes) bytes or has more than "
                + "\(gate.limits.maxHeaderCount) fields"
            : "the request is not valid HTTP/1.1 (\(parserError))"
        answer(context, status: tooLarge ? .requestHeaderFieldsTooLarge : .badRequest, message: message)
    }

    /// Answers `status` with `message` (JSON, as the API's errors) and closes the connection.
    private func answer(_ context: ChannelHandlerContext, status: HTTPResponseStatus, message: String) {
        answered = true
        gate.malformed(
            client: ConnectionGate.clientKey(context.channel.remoteAddress), status: "\(status.code)", reason: message)
        let body = ByteBuffer(string: "{\"error\":{\"message\":\"\(message)\"}}")
        var headers = HTTPHeaders()
        headers.add(name: "content-type", value: "application/json; charset=utf-8")
        headers.add(name: "content-length", value: "\(body.readableBytes)")
        headers.add(name: "connection", value: "close")
        for field in HardeningMiddleware<APIRequestContext>.securityHeaders {
            headers.add(name: field.name.rawName, value: field.value)
        }
        context.write(
            wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        ConnectionGuardHandler.closeLingering(context)
    }
}
