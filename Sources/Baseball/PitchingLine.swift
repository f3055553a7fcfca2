/// What one team's pitchers have allowed so far in a game.
package struct PitchingLine: Sendable, Hashable {
    /// Every pitcher who has pitched for the team, in order of entry.
    package var pitchers: [PlayerID] = []
    /// Outs recorded while this team was in the field.
    package var outs = 0
    package var hits = 0
    package var walks = 0
    package var hitBatsmen = 0
    /// Errors charged to the team's fielders.
    package var errors = 0
    /// Completed plate appearances against the team.
    package var battersFaced = 0
    /// Batters who reached base (hit, walk, hit by pitch, error, interference, fielder's choice,
    /// dropped third strike). Zero means the perfect game is intact.
    package var battersReached = 0
    package var runs = 0

    package init() {}
}
