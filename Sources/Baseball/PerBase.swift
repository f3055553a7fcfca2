/// One value for the batter (index 0) and one for each runner by the base he started the play on
/// (indices 1 to 3), stored inline.
@usableFromInline
package struct PerBase<Value> {
    @usableFromInline package var batter: Value
    @usableFromInline package var first: Value
    @usableFromInline package var second: Value
    @usableFromInline package var third: Value

    @inlinable
    package init(repeating value: Value) {
        batter = value
        first = value
        second = value
        third = value
    }

    @inlinable
    package init(batter: Value, first: Value, second: Value, third: Value) {
        self.batter = batter
        self.first = first
        self.second = second
        self.third = third
    }

    /// `index` 0 is the batter, 1...3 the runner who started on that base.

    @inlinable
    package subscript(index: Int) -> Value {
        get {
            switch index {
            case 0: batter
            case 1: first
            case 2: second
            default: third
            }
        }
        set {
            switch index {
            case 0: batter = newValue
            case 1: first = newValue
            case 2: second = newValue
            default: third = newValue
            }
        }
    }
}

extension PerBase: Sendable where Value: Sendable {}
extension PerBase: Equatable where Value: Equatable {}
extension PerBase: Hashable where Value: Hashable {}
extension PerBase: Codable where Value: Codable {}

/// A set of play participants: the batter (bit 0) and runners by starting base (bits 1 to 3).
@usableFromInline
package struct BaseFlags: OptionSet, Sendable, Hashable, Codable {
    @usableFromInline package let rawValue: UInt8
    @inlinable package init(rawValue: UInt8) { self.rawValue = rawValue }

    package static let batter = BaseFlags(rawValue: 1)
    package static let first = BaseFlags(rawValue: 2)
    package static let second = BaseFlags(rawValue: 4)
    package static let third = BaseFlags(rawValue: 8)

    /// The flag for index 0 (batter) ... 3 (runner on third).

    @inlinable
    package static func at(_ index: Int) -> BaseFlags { BaseFlags(rawValue: 1 << UInt8(index)) }

    @inlinable
    package subscript(index: Int) -> Bool {
        get { contains(.at(index)) }
        set {
            if newValue { insert(.at(index)) } else { remove(.at(index)) }
        }
    }
}
