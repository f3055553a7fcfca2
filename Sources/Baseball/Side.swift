/// One of the two teams in a game.
package enum Side: Int, Sendable, Hashable, Codable, CaseIterable {
    case away = 0
    case home = 1

    /// The other team.
    
    package var opponent: Side { self == .away ? .home : .away }
}

/// One value per team, stored inline.
package struct PerSide<Value> {
    package var away: Value
    package var home: Value

    package init(away: Value, home: Value) {
        self.away = away
        self.home = home
    }

    package init(repeating value: Value) {
        self.away = value
        self.home = value
    }

    
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
