import Baseball
import Testing

/// Player ids packed from bytes: eight-character ids are checked a word at a time, and must take
/// and refuse exactly what the byte-by-byte rule does.
@Suite struct PlayerIDTests {
    /// The rule, one byte at a time: printable ASCII (0x21-0x7E) but for comma and double quote.
    static func allowed(_ byte: UInt8) -> Bool {
        byte > 0x20 && byte < 0x7F && byte != UInt8(ascii: ",") && byte != UInt8(ascii: "\"")
    }

    static func packed(_ bytes: [UInt8]) -> PlayerID? {
        bytes.withUnsafeBufferPointer { PlayerID(ascii: $0) }
    }

    @Test func everyByteAtEveryPlaceOfAnEightCharacterIDIsJudgedAsByByte() {
        let base = Array("gioll001".utf8)
        for place in 0..<8 {
            for value in 0...255 {
                var bytes = base
                bytes[place] = UInt8(value)
                let id = Self.packed(bytes)
                #expect((id != nil) == Self.allowed(UInt8(value)), "byte \(value) at \(place)")
                if let id {
                    var expected: UInt64 = 0
                    for (index, byte) in bytes.enumerated() { expected |= UInt64(byte) << (8 * UInt64(index)) }
                    #expect(id.rawValue == expected, "byte \(value) at \(place)")
                }
            }
        }
    }

    @Test func shortAndLongIDs() throws {
        #expect(Self.packed([]) == nil)
        #expect(Self.packed(Array("123456789".utf8)) == nil)
        let seven = try #require(Self.packed(Array("6600034".utf8)))
        #expect(seven.length == 7)
        #expect(seven == PlayerID("6600034"))
        #expect(Self.packed(Array("ab,d".utf8)) == nil)
        // Several bad bytes at once, and bytes whose sums would carry into a neighbour.
        #expect(Self.packed([0x7F, 0xFF, 0x80, 0x20, 0x41, 0x41, 0x41, 0x41]) == nil)
        #expect(Self.packed([0xA1, 0xA1, 0xA1, 0xA1, 0xA1, 0xA1, 0xA1, 0xA1]) == nil)
        #expect(Self.packed([0x7E, 0x21, 0x7E, 0x21, 0x7E, 0x21, 0x7E, 0x21]) != nil)
    }
}
