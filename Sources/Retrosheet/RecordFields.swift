/// The comma-separated fields of one record line, as byte ranges.
///
/// Follows Retrosheet's convention: a field that starts with a double quote runs to the next
/// double quote, and commas inside it are not separators. At most `capacity` fields are kept;
/// `count` still counts them all. (Eight plain stored ranges rather than an `InlineArray`: reading
/// an `InlineArray` element by a variable index copies the whole array with this compiler.)
struct RecordFields {
    static let capacity = 8
    private var r0 = ByteRange.empty, r1 = ByteRange.empty, r2 = ByteRange.empty, r3 = ByteRange.empty
    private var r4 = ByteRange.empty, r5 = ByteRange.empty, r6 = ByteRange.empty, r7 = ByteRange.empty
    private(set) var count = 0
    /// A quoted field without its closing quote.
    private(set) var hasUnterminatedQuote = false

    init(_ bytes: UnsafeBufferPointer<UInt8>, line: ByteRange) {
        let base = bytes.baseAddress!
        // Words may be read up to here (the end of the buffer, not of the line).
        let wordLimit = bytes.count - 8
        var position = Int(line.start)
        let end = Int(line.end)
        while true {
            var fieldStart = position
            let fieldEnd: Int
            if position < end && base[position] == .quote {
                fieldStart = position + 1
                var scan = fieldStart
                while scan < end && base[scan] != .quote { scan += 1 }
                if scan >= end { hasUnterminatedQuote = true }
                fieldEnd = min(scan, end)
                position = scan + 1
                // Anything between the closing quote and the next comma belongs to no field.
                while position < end && base[position] != .comma { position += 1 }
            } else {
                let scan = Self.nextComma(base, from: position, end: end, wordLimit: wordLimit)
                fieldEnd = scan
                position = scan
            }
            store(ByteRange(start: fieldStart, end: fieldEnd))
            if position >= end { break }
            position += 1  // the comma
            if position == end {
                // A trailing comma: one more, empty field.
                store(ByteRange(start: end, end: end))
                break
            }
        }
    }

    /// The offset of the first comma in `start..<end`, or `end`. Eight bytes at a time: a byte
    /// equal to ',' becomes zero after the XOR, and the classic zero-byte test flags it (its
    /// lowest flag is always exact).
    @inline(__always)
    private static func nextComma(_ base: UnsafePointer<UInt8>, from start: Int, end: Int, wordLimit: Int) -> Int {
        var position = start
        while position < end && position <= wordLimit {
            let word = UnsafeRawPointer(base + position).loadUnaligned(as: UInt64.self)
            let x = word ^ 0x2C2C_2C2C_2C2C_2C2C
            let found = (x &- 0x0101_0101_0101_0101) & ~x & 0x8080_8080_8080_8080
            if found != 0 {
                return min(position + found.trailingZeroBitCount / 8, end)
            }
            position += 8
        }
        while position < end && base[position] != .comma { position += 1 }
        return min(position, end)
    }

    private mutating func store(_ range: ByteRange) {
        switch count {
        case 0: r0 = range
        case 1: r1 = range
        case 2: r2 = range
        case 3: r3 = range
        case 4: r4 = range
        case 5: r5 = range
        case 6: r6 = range
        case 7: r7 = range
        default: break
        }
        count += 1
    }

    /// Keeps the first `count` fields (the type and the fields a record is read from), as
    /// `cwevent` reads a record's fields by position and ignores any after them.
    mutating func keepFirst(_ count: Int) {
        self.count = min(self.count, count)
    }

    subscript(index: Int) -> ByteRange {
        switch index {
        case 0: r0
        case 1: r1
        case 2: r2
        case 3: r3
        case 4: r4
        case 5: r5
        case 6: r6
        case 7: r7
        default: .empty
        }
    }
}
