/// A player identifier of up to eight ASCII characters, packed into one word.
///
/// Retrosheet ids (`gioll001`) are exactly eight characters and MLB Stats API ids are at most
/// seven digits, so both fit. Packing keeps lineups, bases and plays free of heap allocations and
/// makes comparisons a single integer compare, which matters on the replay hot path.
@usableFromInline
package struct PlayerID: Hashable, Sendable, Comparable {
    /// The characters, first character in the lowest byte, zero-padded.
    @usableFromInline package let rawValue: UInt64

    /// The absent player (an empty base, an empty lineup slot).
    package static let none = PlayerID(rawValue: 0)

    @inlinable
    package init(rawValue: UInt64) {
        self.rawValue = rawValue
    }

    /// Packs `bytes`; returns nil when they are empty, longer than eight, or not printable ASCII
    /// without commas and quotes.

    package init?(ascii bytes: UnsafeBufferPointer<UInt8>) {
        guard !bytes.isEmpty, bytes.count <= 8 else { return nil }
        if bytes.count == 8 {
            // Retrosheet's ids, eight characters: checked a word at a time.
            guard let value = Self.packedWord(bytes.baseAddress!) else { return nil }
            self.rawValue = value
            return
        }
        var value: UInt64 = 0
        var shift: UInt64 = 0
        for byte in bytes {
            guard byte > 0x20, byte < 0x7F, byte != UInt8(ascii: ","), byte != UInt8(ascii: "\"") else {
                return nil
            }
            value |= UInt64(byte) << shift
            shift += 8
        }
        self.rawValue = value
    }

    /// The eight bytes at `start` packed, or nil when one is not printable ASCII or is a comma or
    /// a double quote: the byte-wise checks of `init?(ascii:)`, made on the whole word at once.
    @inline(__always)
    private static func packedWord(_ start: UnsafePointer<UInt8>) -> UInt64? {
        let word = UInt64(littleEndian: UnsafeRawPointer(start).loadUnaligned(as: UInt64.self))
        let high: UInt64 = 0x8080_8080_8080_8080
        let ones: UInt64 = 0x0101_0101_0101_0101
        // A byte equal to zero sets its high bit here (and any flag at all means there is one).
        func hasZeroByte(_ x: UInt64) -> Bool { (x &- ones) & ~x & high != 0 }
        guard word & high == 0,  // every byte below 0x80, so the sums below carry into no neighbour
            (word &+ 0x5F5F_5F5F_5F5F_5F5F) & high == high,  // every byte above 0x20
            (word &+ ones) & high == 0,  // every byte below 0x7F
            !hasZeroByte(word ^ 0x2C2C_2C2C_2C2C_2C2C),  // no comma
            !hasZeroByte(word ^ 0x2222_2222_2222_2222)  // no double quote
        else { return nil }
        return word
    }

    package init?(_ string: String) {
        var utf8 = Array(string.utf8)
        guard let id = utf8.withUnsafeMutableBufferPointer({ PlayerID(ascii: UnsafeBufferPointer($0)) }) else {
            return nil
        }
        self = id
    }

    @inlinable package var isNone: Bool { rawValue == 0 }

    /// Number of characters.
    package var length: Int { (64 - rawValue.leadingZeroBitCount + 7) / 8 }

    /// Appends the characters to `buffer`.

    package func write(to buffer: inout [UInt8]) {
        var value = rawValue
        while value != 0 {
            buffer.append(UInt8(truncatingIfNeeded: value))
            value >>= 8
        }
    }

    @usableFromInline
    package static func < (lhs: PlayerID, rhs: PlayerID) -> Bool {
        lhs.description < rhs.description
    }
}

extension PlayerID: CustomStringConvertible {
    @usableFromInline
    package var description: String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(8)
        write(to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }
}

extension PlayerID: Codable {
    @usableFromInline
    package init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let string = try container.decode(String.self)
        // `.none` (no player) is written as the empty string.
        if string.isEmpty {
            self = .none
            return
        }
        guard let id = PlayerID(string) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "'\(string)' is not a player id of 1-8 ASCII characters")
        }
        self = id
    }

    @usableFromInline
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
