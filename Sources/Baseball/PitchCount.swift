/// Balls and strikes on the batter, as scored; unknown in older or incomplete accounts.
@usableFromInline
package struct PitchCount: Sendable, Hashable, Codable {
    @usableFromInline package var balls: UInt8
    @usableFromInline package var strikes: UInt8

    @inlinable
    package init(balls: UInt8, strikes: UInt8) {
        self.balls = balls
        self.strikes = strikes
    }

    package static let zero = PitchCount(balls: 0, strikes: 0)

    /// A count at which a relieved pitcher is still charged with a walk that follows
    /// (2-0, 2-1, 3-0, 3-1, 3-2: the official scoring rule on relievers).
    package var chargesWalkToPreviousPitcher: Bool {
        (balls == 2 && strikes <= 1) || balls == 3
    }
}
