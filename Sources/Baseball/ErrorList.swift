/// The errors charged on a play, in order: fielder positions 1-9 (0 when unknown), stored inline.
/// Up to four positions are kept; `count` counts them all.
package struct ErrorList: Sendable, Hashable {
    private var packed: UInt32 = 0
    package private(set) var count = 0

    package init() {}

    package var isEmpty: Bool { count == 0 }

    package mutating func append(_ fielder: UInt8) {
        if count < 4 { packed |= UInt32(fielder) << (UInt32(count) * 8) }
        count += 1
    }

    /// The fielder charged with error `index` (0-based, below 4).
    package subscript(index: Int) -> UInt8 {
        UInt8(truncatingIfNeeded: packed >> (UInt32(index) * 8))
    }
}
