/// The fielders who handled a play on one batter or runner (`64`, `2E5`), packed into one word:
/// the first seven characters (digits, `?`, `E`) in the low bytes, the character count in bits
/// 56-62 and whether an error is part of it in bit 63.
@usableFromInline
package struct FieldingCredit: Sendable, Hashable, Codable {
    @usableFromInline package internal(set) var bits: UInt64 = 0

    @inlinable package init() {}

    package init(_ text: String) {
        for byte in text.utf8 { append(byte) }
    }

    /// Number of characters written (saturating at 127; the first seven are kept).
    @inlinable package var count: Int { Int((bits >> 56) & 0x7F) }

    /// Whether an error (`E`) is part of the credit, which makes the player safe.
    @inlinable package var hasError: Bool { bits >> 63 != 0 }

    /// Nothing was recorded.
    @inlinable package var isEmpty: Bool { bits == 0 }

    /// A credit without an error is a putout of that batter or runner.
    @inlinable package var isPutOut: Bool { bits != 0 && bits >> 63 == 0 }

    @inlinable
    package mutating func append(_ byte: UInt8) {
        if byte == UInt8(ascii: "E") { bits |= 1 << 63 }
        let count = self.count
        if count < 7 { bits |= UInt64(byte) << (UInt64(count) * 8) }
        if count < 127 { bits += 1 << 56 }
    }

    /// The last fielder character kept, or 0.
    @inlinable
    package var last: UInt8 {
        let count = self.count
        guard count > 0 else { return 0 }
        return UInt8(truncatingIfNeeded: bits >> (UInt64(min(count, 7) - 1) * 8))
    }

    /// The fielder charged with the error in the credit (the digit after `E`: 5 in `2E5`), or 0.
    package var errorFielder: UInt8 {
        guard hasError else { return 0 }
        let count = min(self.count, 7)
        for index in 0..<count where UInt8(truncatingIfNeeded: bits >> (UInt64(index) * 8)) == UInt8(ascii: "E") {
            guard index + 1 < count else { return 0 }
            let digit = UInt8(truncatingIfNeeded: bits >> (UInt64(index + 1) * 8))
            return (0x31...0x39).contains(digit) ? digit &- 0x30 : 0
        }
        return 0
    }

    /// The first fielder character, or 0.
    @inlinable
    package var first: UInt8 { UInt8(truncatingIfNeeded: bits) }
}

extension FieldingCredit: CustomStringConvertible {
    @usableFromInline
    package var description: String {
        var bytes: [UInt8] = []
        for index in 0..<min(count, 7) {
            bytes.append(UInt8(truncatingIfNeeded: bits >> (UInt64(index) * 8)))
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
