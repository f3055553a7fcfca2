/// The errors charged on a play, in order: fielder positions 1-9 (0 when unknown), stored inline.
/// Up to four positions are kept; `count` counts them all.
@usableFromInline
package struct ErrorList: Sendable, Hashable, Codable {
    @usableFromInline var packed: UInt32 = 0
    @usableFromInline package internal(set) var count = 0

    @inlinable package init() {}

    @inlinable package var isEmpty: Bool { count == 0 }

    @inlinable
    package mutating func append(_ fielder: UInt8) {
        if count < 4 { packed |= UInt32(fielder) << (UInt32(count) * 8) }
        count += 1
    }

    /// The fielder charged with error `index` (0-based, below 4).
    @inlinable
    package subscript(index: Int) -> UInt8 {
        UInt8(truncatingIfNeeded: packed >> (UInt32(index) * 8))
    }
}
