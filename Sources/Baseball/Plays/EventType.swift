/// The kind of a play, numbered as Retrosheet's BEVENT and Chadwick's `cwevent` number them
/// (`EVENT_CD`), so exports line up with the reference tools.
@usableFromInline
package enum EventType: UInt8, Sendable, Hashable, Codable, CaseIterable {
    case unknown = 0
    case none = 1
    case genericOut = 2
    case strikeout = 3
    case stolenBase = 4
    case defensiveIndifference = 5
    case caughtStealing = 6
    case pickoffError = 7
    case pickoff = 8
    case wildPitch = 9
    case passedBall = 10
    case balk = 11
    case otherAdvance = 12
    case foulError = 13
    case walk = 14
    case intentionalWalk = 15
    case hitByPitch = 16
    case interference = 17
    case error = 18
    case fieldersChoice = 19
    case single = 20
    case double = 21
    case triple = 22
    case homeRun = 23
    case missingPlay = 24

    /// A play that ends the batter's plate appearance.

    @inlinable
    package var endsPlateAppearance: Bool {
        self == .genericOut || self == .strikeout
            || (rawValue >= EventType.walk.rawValue && rawValue <= EventType.homeRun.rawValue)
    }

    /// A base hit.

    @inlinable
    package var isHit: Bool { rawValue >= EventType.single.rawValue && rawValue <= EventType.homeRun.rawValue }

    /// Bases the hit is worth (1-4), 0 for anything else.

    @inlinable
    package var hitValue: Int { isHit ? Int(rawValue - EventType.single.rawValue) + 1 : 0 }

    /// Walks, intentional or not.

    @inlinable
    package var isWalk: Bool { self == .walk || self == .intentionalWalk }
}
