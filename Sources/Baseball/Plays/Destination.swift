/// Where a batter or runner ended a play, in the numbering of Retrosheet's BEVENT and Chadwick
/// (`BAT_DEST_ID`, `RUNn_DEST_ID`).
@usableFromInline
package struct Destination: RawRepresentable, Sendable, Hashable, Codable {
    @usableFromInline package let rawValue: UInt8
    @inlinable package init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Out on the play, or (before the engine resolves a play) not mentioned.
    package static let none = Destination(rawValue: 0)
    package static let first = Destination(rawValue: 1)
    package static let second = Destination(rawValue: 2)
    package static let third = Destination(rawValue: 3)
    /// Scored.
    package static let home = Destination(rawValue: 4)
    /// Scored, unearned (`(UR)`).
    package static let homeUnearned = Destination(rawValue: 5)
    /// Scored, earned to the pitcher but unearned to the team (`(TUR)`).
    package static let homeTeamUnearned = Destination(rawValue: 6)

    /// The base 1...3 with this destination.

    @inlinable
    package static func base(_ base: Int) -> Destination { Destination(rawValue: UInt8(base)) }

    @inlinable
    package var scored: Bool { rawValue >= 4 }

    /// The base reached (1...3), or nil when out, not involved or scored.

    @inlinable
    package var base: Int? { rawValue >= 1 && rawValue <= 3 ? Int(rawValue) : nil }
}

/// How a run batted in was credited.
@usableFromInline
package enum RBICredit: UInt8, Sendable, Hashable, Codable {
    case none = 0
    /// Credited by the scoring rules.
    case credited = 1
    /// Marked explicitly (`(RBI)`), which survives the rules that would otherwise deny it.
    case explicit = 2
}
