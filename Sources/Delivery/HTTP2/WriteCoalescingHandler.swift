import NIOCore

/// Gathers the buffers written between two flushes into one, for the TLS handler below it.
///
/// NIOSSL seals one TLS record for each buffer written to it, and nio-http2 writes two or three
/// buffers per request (the HEADERS frame; a DATA frame's 9-byte header and its payload). At tens
/// of thousands of requests a second, most records held a few hundred bytes or fewer, and each
/// cost an AEAD seal here and an open at the peer, with their bookkeeping. Gathered, a record
/// holds up to 16 KB (TLS's limit): the same bytes, a few dozen times fewer records.
///
/// Writes keep their order, and their promises complete when the gathered write does.
package final class WriteCoalescingHandler: ChannelOutboundHandler, RemovableChannelHandler {
    package typealias OutboundIn = IOData
    package typealias OutboundOut = IOData

    /// TLS's largest record: gathered data is passed on in pieces of about this size.
    package static let recordSize = 16 * 1024

    private var pending: ByteBuffer?
    private var promises: [EventLoopPromise<Void>] = []

    package init() {}

    package func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .byteBuffer(var buffer) = unwrapOutboundIn(data) else {
            // A file region cannot be gathered: what came before it goes first.
            pass(context)
            context.write(data, promise: promise)
            return
        }
        if pending == nil && buffer.readableBytes >= Self.recordSize {
            context.write(data, promise: promise)
            return
        }
        if pending == nil {
            pending = context.channel.allocator.buffer(capacity: Self.recordSize)
        }
        pending!.writeBuffer(&buffer)
        if let promise { promises.append(promise) }
        if pending!.readableBytes >= Self.recordSize { pass(context) }
    }

    package func flush(context: ChannelHandlerContext) {
        pass(context)
        context.flush()
    }

    package func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        // Unflushed writes meet the close downstream, as they would without this handler.
        pass(context)
        context.close(mode: mode, promise: promise)
    }

    package func handlerRemoved(context: ChannelHandlerContext) {
        pass(context)
    }

    /// Writes what has been gathered, as one buffer, with one promise for all of it.
    private func pass(_ context: ChannelHandlerContext) {
        guard let buffer = pending else { return }
        pending = nil
        let promise: EventLoopPromise<Void>?
        switch promises.count {
        case 0: promise = nil
        case 1: promise = promises[0]
        default:
            let all = promises
            promise = context.eventLoop.makePromise()
            promise!.futureResult.whenComplete { result in
                for each in all { each.completeWith(result) }
            }
        }
        promises.removeAll(keepingCapacity: true)
        context.write(wrapOutboundOut(.byteBuffer(buffer)), promise: promise)
    }
}
