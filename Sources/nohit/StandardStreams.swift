#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writing to standard output and error straight from bytes (no intermediate copies).
enum StandardStreams {
    struct WriteError: Error, CustomStringConvertible {
        var code: Int32
        var description: String { "cannot write to standard output: \(String(cString: strerror(code)))" }
    }

    static func writeOutput(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { buffer in try writeAll(1, buffer) }
    }

    static func writeError(_ text: String) {
        var text = text
        text.withUTF8 { buffer in _ = try? writeAll(2, UnsafeRawBufferPointer(buffer)) }
    }

    private static func writeAll(_ descriptor: Int32, _ buffer: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < buffer.count {
            let written = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                throw WriteError(code: errno)
            }
            offset += written
        }
    }
}
