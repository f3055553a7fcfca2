import NIOCore
import NIOHTTP1

/// Right after the HTTP decoder: a request the decoder cannot read (a malformed request line,
/// `Content-Length` with chunked encoding, a head past the size or field-count limit) is answered
/// 400 or 431 and the connection closed — not left open with no answer.
final class ParserErrorResponder: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let gate: ConnectionGate
    private var answered = false

    init(gate: ConnectionGate) {
        self.gate = gate
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let parserError = error as? HTTPParserError else {
            context.fireErrorCaught(error)
            return
        }
        guard !answered else { return }
        answered = true
        gate.countMalformed()
        let tooLarge = parserError == .headerOverflow
        let message =
            tooLarge
            ? "the request head is larger than \(gate.limits.maxHeaderBytes) bytes or has more than "
                + "\(gate.limits.maxHeaderCount) fields"
            : "the request is not valid HTTP/1.1 (\(parserError))"
        let body = ByteBuffer(string: "{\"error\":{\"message\":\"\(message)\"}}")
        var headers = HTTPHeaders()
        headers.add(name: "content-type", value: "application/json; charset=utf-8")
        headers.add(name: "content-length", value: "\(body.readableBytes)")
        headers.add(name: "connection", value: "close")
        for field in HardeningMiddleware<APIRequestContext>.securityHeaders {
            headers.add(name: field.name.rawName, value: field.value)
        }
        let status: HTTPResponseStatus = tooLarge ? .requestHeaderFieldsTooLarge : .badRequest
        context.write(
            wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        ConnectionGuardHandler.closeLingering(context)
    }
}
