/// The fielders who handled a play on one batter or runner (`64`, `2E5`), packed: up to eight
/// characters, digits, `?` and `E`.
package struct FieldingCredit: Sendable, Hashable {
    /// Characters, first in the lowest byte.
    package private(set) var packed: UInt64 = 0
    /// Number of characters recorded (at most 8 are kept).
    package private(set) var count: UInt8 = 0
    /// Whether an error (`E`) is part of the credit, which makes the player safe.
    package private(set) var hasError = false

    package init() {}

    package init(_ text: String) {
        for byte in text.utf8 { append(byte) }
    }

    /// Nothing was recorded.
    
    package var isEmpty: Bool { count == 0 }

    /// A credit without an error is a putout of that batter or runner.
    
    package var isPutOut: Bool { count > 0 && !hasError }

    package mutating func append(_ byte: UInt8) {
        if byte == UInt8(ascii: "E") { hasError = true }
        if count < 8 { packed |= UInt64(byte) << (UInt64(count) * 8) }
        count &+= 1
    }

    /// The last fielder character, or 0.
    package var last: UInt8 {
        guard count > 0 else { return 0 }
        let index = min(Int(count), 8) - 1
        return UInt8(truncatingIfNeeded: packed >> (UInt64(index) * 8))
    }

    /// The first fielder character, or 0.
    package var first: UInt8 { UInt8(truncatingIfNeeded: packed) }
}

extension FieldingCredit: CustomStringConvertible {
    package var description: String {
        var bytes: [UInt8] = []
        var value = packed
        while value != 0 {
            bytes.append(UInt8(truncatingIfNeeded: value))
            value >>= 8
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
