/// The comma-separated fields of one record line, as byte ranges.
///
/// Follows Retrosheet's convention: a field that starts with a double quote runs to the next
/// double quote, and commas inside it are not separators. At most `capacity` fields are kept;
/// `count` still counts them all.
struct RecordFields {
    static let capacity = 8
    private(set) var ranges: InlineArray<8, ByteRange> = .init(repeating: .empty)
    private(set) var count = 0
    /// A quoted field without its closing quote.
    private(set) var hasUnterminatedQuote = false

    init(_ bytes: UnsafeBufferPointer<UInt8>, line: ByteRange) {
        var position = Int(line.start)
        let end = Int(line.end)
        while true {
            var fieldStart = position
            var fieldEnd: Int
            if position < end && bytes[position] == .quote {
                fieldStart = position + 1
                var scan = fieldStart
                while scan < end && bytes[scan] != .quote { scan += 1 }
                if scan >= end { hasUnterminatedQuote = true }
                fieldEnd = min(scan, end)
                position = scan + 1
                // Anything between the closing quote and the next comma belongs to no field.
                while position < end && bytes[position] != .comma { position += 1 }
            } else {
                var scan = position
                while scan < end && bytes[scan] != .comma { scan += 1 }
                fieldEnd = scan
                position = scan
            }
            if count < Self.capacity {
                ranges[count] = ByteRange(start: fieldStart, end: fieldEnd)
            }
            count += 1
            if position >= end { break }
            position += 1  // the comma
            if position == end {
                // A trailing comma: one more, empty field.
                if count < Self.capacity { ranges[count] = ByteRange(start: end, end: end) }
                count += 1
                break
            }
        }
    }

    subscript(index: Int) -> ByteRange { ranges[index] }
}
