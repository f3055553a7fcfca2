import Foundation
import NIOCore
import NIOPosix
import Synchronization

/// A count shared with callbacks.
final class Counter: Sendable {
    private let count = Atomic<Int>(0)
    var value: Int { count.load(ordering: .relaxed) }
    func add(_ amount: Int) { count.add(amount, ordering: .relaxed) }
}

/// Reads and drops everything.
final class Discard: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}
    func errorCaught(context: ChannelHandlerContext, error: any Error) { context.close(promise: nil) }
}
