/// One line of a game's play-by-play: a play or a player entering, in words, with the situation
/// after it.
package struct PlayByPlayEntry: Sendable, Hashable, Codable {
    /// The play's number in the game (substitutions carry the number of the play before them).
    package var number: Int
    package var inning: Int
    /// top or bottom.
    package var half: String
    package var text: String
    /// Outs in the half-inning after it.
    package var outs: Int
    package var awayScore: Int
    package var homeScore: Int
    /// Whether runs scored on it.
    package var scoring: Bool
    /// The half-inning in words, as a heading: "Top of the 7th".
    package var heading: String
    /// The outs after it in words: "nobody out", "1 out", "3 outs".
    package var outsText: String
    /// The runners after it: first 1, second 2, third 4 (none once the half is over).
    package var bases = 0
    /// The home team's chance of winning after it, from history (`WinExpectancy`); 1 or 0 after
    /// the last play of a final game; nil for a player entering, or without the table.
    package var homeWin: Double? = nil
    /// The leverage of the situation it came in (1 is an average play's); nil as `homeWin`.
    package var leverage: Double? = nil

    package init(
        number: Int, inning: Int, half: String, text: String, outs: Int, awayScore: Int, homeScore: Int, scoring: Bool
    ) {
        self.number = number
        self.inning = inning
        self.half = half
        self.text = text
        self.outs = outs
        self.awayScore = awayScore
        self.homeScore = homeScore
        self.scoring = scoring
        let words = "\(half) of the \(Words.ordinal(inning))"
        heading = words.prefix(1).uppercased() + words.dropFirst()
        outsText = Words.outs(outs)
    }
}
