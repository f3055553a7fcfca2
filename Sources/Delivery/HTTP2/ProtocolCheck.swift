import Foundation
import NIOCore
import NIOPosix
import NIOTLS
import Synchronization

/// Completes `negotiated` when the TLS handshake ends: with success if the server chose HTTP/2,
/// with `notHTTP2` if it chose another protocol or none, with the error if the handshake failed
/// or did not end within `timeout` (then the connection is closed: requests wait for it, and a
/// server that accepts but never answers must not hold them past their deadline).
final class ProtocolCheck: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    let negotiated: EventLoopPromise<Void>
    private let timeout: TimeAmount
    private var settled = false
    private var timer: Scheduled<Void>?

    init(negotiated: EventLoopPromise<Void>, timeout: TimeAmount) {
        self.negotiated = negotiated
        self.timeout = timeout
    }

    func channelActive(context: ChannelHandlerContext) {
        if !settled {
            let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            timer = context.eventLoop.scheduleTask(in: timeout) {
                let (check, context) = loopBound.value
                check.settle(.failure(HTTP2Client.Failure.cannotConnect("no TLS handshake within \(check.timeout)")))
                context.close(promise: nil)
            }
        }
        context.fireChannelActive()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .handshakeCompleted(let chosen) = event as? TLSUserEvent {
            settle(chosen == "h2" ? .success(()) : .failure(HTTP2Client.Failure.notHTTP2(chosen ?? "none")))
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        settle(.failure(HTTP2Client.Failure.cannotConnect("\(error)")))
        context.fireErrorCaught(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        settle(.failure(HTTP2Client.Failure.cannotConnect("closed during the TLS handshake")))
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        settle(.failure(HTTP2Client.Failure.cannotConnect("closed during the TLS handshake")))
    }

    private func settle(_ result: Result<Void, any Error>) {
        guard !settled else { return }
        settled = true
        timer?.cancel()
        timer = nil
        negotiated.completeWith(result)
    }
}
