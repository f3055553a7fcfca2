import Foundation
import NIOCore
import NIOPosix
import Synchronization

/// HTTP/2 frames written by hand (HPACK literals without indexing or Huffman coding).
enum HTTP2Frames {
    static var preface: ByteBuffer {
        var buffer = ByteBuffer(string: "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
        buffer.writeImmutableBuffer(frame(type: 0x4, flags: 0, stream: 0, payload: ByteBuffer()))
        return buffer
    }

    static func frame(type: UInt8, flags: UInt8, stream: UInt32, payload: ByteBuffer) -> ByteBuffer {
        var buffer = ByteBuffer()
        let length = payload.readableBytes
        buffer.writeInteger(UInt8(length >> 16))
        buffer.writeInteger(UInt16(length & 0xFFFF))
        buffer.writeInteger(type)
        buffer.writeInteger(flags)
        buffer.writeInteger(stream & 0x7FFF_FFFF)
        buffer.writeImmutableBuffer(payload)
        return buffer
    }

    /// HEADERS with END_STREAM and END_HEADERS.
    static func headers(stream: UInt32, fields: [(String, String)]) -> ByteBuffer {
        var block = ByteBuffer()
        for (name, value) in fields {
            block.writeInteger(UInt8(0))
            string(name, into: &block)
            string(value, into: &block)
        }
        return frame(type: 0x1, flags: 0x1 | 0x4, stream: stream, payload: block)
    }

    static func reset(stream: UInt32) -> ByteBuffer {
        var payload = ByteBuffer()
        payload.writeInteger(UInt32(0x8))
        return frame(type: 0x3, flags: 0, stream: stream, payload: payload)
    }

    private static func string(_ text: String, into buffer: inout ByteBuffer) {
        let bytes = Array(text.utf8)
        if bytes.count < 127 {
            buffer.writeInteger(UInt8(bytes.count))
        } else {
            buffer.writeInteger(UInt8(127))
            var rest = bytes.count - 127
            while rest >= 128 {
                buffer.writeInteger(UInt8(rest & 0x7F | 0x80))
                rest >>= 7
            }
            buffer.writeInteger(UInt8(rest))
        }
        buffer.writeBytes(bytes)
    }
}

/// Reads HTTP/2 frames: acknowledges the server's SETTINGS and PINGs, counts the rest.
final class HTTP2FrameReader: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer
    private var buffer = ByteBuffer()
    private let answered: @Sendable (Int) -> Void

    init(answered: @escaping @Sendable (Int) -> Void) { self.answered = answered }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var incoming = unwrapInboundIn(data)
        buffer.writeBuffer(&incoming)
        var frames = 0
        while buffer.readableBytes >= 9 {
            let length =
                Int(buffer.getInteger(at: buffer.readerIndex, as: UInt8.self)!) << 16
                | Int(buffer.getInteger(at: buffer.readerIndex + 1, as: UInt16.self)!)
            guard buffer.readableBytes >= 9 + length else { break }
            let type = buffer.getInteger(at: buffer.readerIndex + 3, as: UInt8.self)!
            let flags = buffer.getInteger(at: buffer.readerIndex + 4, as: UInt8.self)!
            buffer.moveReaderIndex(forwardBy: 9)
            let payload = buffer.readSlice(length: length)!
            frames += 1
            if type == 0x4 && flags & 0x1 == 0 {
                context.writeAndFlush(
                    NIOAny(HTTP2Frames.frame(type: 0x4, flags: 0x1, stream: 0, payload: ByteBuffer())), promise: nil)
            } else if type == 0x6 && flags & 0x1 == 0 {
                context.writeAndFlush(
                    NIOAny(HTTP2Frames.frame(type: 0x6, flags: 0x1, stream: 0, payload: payload)), promise: nil)
            }
        }
        buffer.discardReadBytes()
        if frames > 0 { answered(frames) }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) { context.close(promise: nil) }
}
