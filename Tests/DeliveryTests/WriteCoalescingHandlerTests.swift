import Delivery
import NIOCore
import NIOEmbedded
import Synchronization
import Testing

/// What goes below the gathering handler (to TLS) is what came from above it, in order, in
/// fewer writes; and every write's promise completes.
@Suite struct WriteCoalescingHandlerTests {
    /// Sees each write that reaches it, flushed or not (EmbeddedChannel shows only flushed ones).
    private final class Recorder: ChannelOutboundHandler {
        typealias OutboundIn = ByteBuffer
        var seen: [String] = []

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            seen.append(String(buffer: unwrapOutboundIn(data)))
            context.write(data, promise: promise)
        }
    }

    private func channel(_ recorder: Recorder = Recorder(), coalescing: Bool = true) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(recorder)
        if coalescing { try channel.pipeline.syncOperations.addHandler(WriteCoalescingHandler()) }
        return channel
    }

    private func buffer(_ text: String) -> ByteBuffer { ByteBuffer(string: text) }

    private func outbound(_ channel: EmbeddedChannel) throws -> [String] {
        var written: [String] = []
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) { written.append(String(buffer: buffer)) }
        return written
    }

    @Test func writesBetweenFlushesGoOutAsOneInOrder() throws {
        let channel = try channel()
        let completed = Mutex<[Int]>([])
        for (index, part) in ["HEADERS", "DATA-head", "payload"].enumerated() {
            let promise = channel.eventLoop.makePromise(of: Void.self)
            promise.futureResult.whenSuccess { completed.withLock { $0.append(index) } }
            channel.write(buffer(part), promise: promise)
        }
        #expect(try outbound(channel).isEmpty)
        #expect(completed.withLock { $0.isEmpty })
        channel.flush()
        #expect(try outbound(channel) == ["HEADERSDATA-headpayload"])
        #expect(completed.withLock { $0 } == [0, 1, 2])
        channel.writeAndFlush(buffer("next"), promise: nil)
        #expect(try outbound(channel) == ["next"])
        #expect(try channel.finish().isClean)
    }

    @Test func aRecordsWorthGoesOnWithoutWaitingForTheFlush() throws {
        let recorder = Recorder()
        let channel = try channel(recorder)
        let piece = String(repeating: "x", count: 6_000)
        for _ in 0..<3 { channel.write(buffer(piece), promise: nil) }
        // 18,000 bytes gathered: past TLS's 16 KB record, so passed on already.
        #expect(recorder.seen.map(\.count) == [18_000])
        channel.write(buffer("tail"), promise: nil)
        #expect(recorder.seen.count == 1)
        channel.flush()
        #expect(recorder.seen.last == "tail")
        // A buffer of a record or more on its own is passed on as it is.
        let big = String(repeating: "y", count: WriteCoalescingHandler.recordSize)
        channel.write(buffer(big), promise: nil)
        #expect(recorder.seen.map(\.count) == [18_000, 4, WriteCoalescingHandler.recordSize])
        channel.flush()
        #expect(try outbound(channel).map(\.count) == [18_000, 4, WriteCoalescingHandler.recordSize])
        #expect(try channel.finish().isClean)
    }

    /// Unflushed writes are not kept back when the channel closes: they meet the close below,
    /// where the channel fails them as it would without the handler.
    @Test func unflushedWritesArePassedOnAtTheClose() throws {
        let recorder = Recorder()
        let channel = try channel(recorder)
        channel.write(buffer("a"), promise: nil)
        channel.write(buffer("b"), promise: nil)
        #expect(recorder.seen.isEmpty)
        _ = try? channel.close().wait()
        #expect(recorder.seen == ["ab"])
    }
}
