/// One of the two teams in a game.
@usableFromInline
package enum Side: Int, Sendable, Hashable, Codable, CaseIterable {
    case away = 0
    case home = 1

    /// The other team.

    @inlinable
    package var opponent: Side { self == .away ? .home : .away }
}

/// One value per team, stored inline.
@usableFromInline
package struct PerSide<Value> {
    @usableFromInline package var away: Value
    @usableFromInline package var home: Value

    @inlinable
    package init(away: Value, home: Value) {
        self.away = away
        self.home = home
    }

    @inlinable
    package init(repeating value: Value) {
        self.away = value
        self.home = value
    }

    @inlinable
    package subscript(side: Side) -> Value {
        get { side == .away ? away : home }
        set {
            if side == .away { away = newValue } else { home = newValue }
        }
    }
}

extension PerSide: Sendable where Value: Sendable {}
extension PerSide: Equatable where Value: Equatable {}
extension PerSide: Hashable where Value: Hashable {}
extension PerSide: Codable where Value: Codable {}
