/// A half-open range of byte offsets into a file's bytes.
package struct ByteRange: Sendable, Hashable {
    package var start: Int32
    package var end: Int32

    package init(start: Int, end: Int) {
        self.start = Int32(truncatingIfNeeded: start)
        self.end = Int32(truncatingIfNeeded: end)
    }

    package static let empty = ByteRange(start: 0, end: 0)

    package var count: Int { Int(end - start) }
    package var isEmpty: Bool { end <= start }
}

extension UInt8 {
    static var comma: UInt8 { 0x2C }
    static var quote: UInt8 { 0x22 }
    static var newline: UInt8 { 0x0A }
    static var carriageReturn: UInt8 { 0x0D }

    var isDigit: Bool { self >= 0x30 && self <= 0x39 }
}

extension UnsafeBufferPointer<UInt8> {
    /// The bytes of `range`.

    func slice(_ range: ByteRange) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(rebasing: self[Int(range.start)..<Int(range.end)])
    }

    /// Decodes `range` as a String (Retrosheet files are ASCII; anything else is replaced).
    func string(_ range: ByteRange) -> String {
        String(decoding: slice(range), as: UTF8.self)
    }

    /// Whether `range` holds exactly `literal`.

    func equals(_ range: ByteRange, _ literal: StaticString) -> Bool {
        guard range.count == literal.utf8CodeUnitCount else { return false }
        let base = literal.utf8Start
        var index = 0
        while index < range.count {
            if self[Int(range.start) + index] != base[index] { return false }
            index += 1
        }
        return true
    }

    /// Parses `range` as a non-negative decimal integer.

    func integer(_ range: ByteRange) -> Int? {
        guard !range.isEmpty, range.count <= 9 else { return nil }
        var value = 0
        for index in Int(range.start)..<Int(range.end) {
            let byte = self[index]
            guard byte.isDigit else { return nil }
            value = value * 10 + Int(byte &- 0x30)
        }
        return value
    }
}
