import Baseball

/// Something that happened in a game, named once by its follower for everything downstream: the
/// live board and stream, the alert publisher, the scoreboard, the deals.
package enum GameEvent: Sendable, Hashable {
    /// First heard of (from the schedule, or with its first update).
    case scheduled
    /// The starting lineups are in: the engine starts from them.
    case lineups
    /// A play, with its number in the game.
    case play(PlayResult, number: Int)
    /// A player entered (in this slot and position).
    case substitution(Appearance)
    /// A half-inning began.
    case halfInning(inning: Int, battingSide: Side)
    /// The score changed; the new score.
    case score(PerSide<Int>)
    /// The status changed (live, delayed, suspended, postponed, final ...).
    case status(GameStatus)
    /// The game is over: its line.
    case final(FinalLine)
    /// A moment of a no-hit bid.
    case moment(Moment)
    /// A play was re-scored (or removed): the game was followed again from its lineups.
    case revision(Revision)
    /// An update did not fit the game: it is followed no further until its source corrects it.
    case problem(String)
    /// A pitch between plays: the count (and the batter, the last pitch) changed.
    case atBat
    /// The ABS challenges changed: a team's counters, a challenged pitch.
    case challenges
}

/// A game's final line: runs, hits and errors by side, innings, and the pitchers of record where
/// the source has them.
package struct FinalLine: Sendable, Hashable, Codable {
    package var runs: PerSide<Int>
    package var hits: PerSide<Int>
    package var errors: PerSide<Int>
    /// Innings played (the last inning with a play).
    package var innings: Int
    package var result: GameResult
    /// Runs by inning.
    package var linescore: RunsByInning

    package init(
        runs: PerSide<Int>, hits: PerSide<Int>, errors: PerSide<Int>, innings: Int, result: GameResult,
        linescore: RunsByInning = RunsByInning()
    ) {
        self.runs = runs
        self.hits = hits
        self.errors = errors
        self.innings = innings
        self.result = result
        self.linescore = linescore
    }
}

/// What a re-scoring changed.
package struct Revision: Sendable, Hashable {
    /// The first update that changed (its index in the game's list).
    package var from: Int
    /// Updates in the game before and after.
    package var updatesBefore: Int
    package var updatesAfter: Int
    package var scoreBefore: PerSide<Int>
    package var scoreAfter: PerSide<Int>
    /// Each pitching side's bid before and after.
    package var bidsBefore: PerSide<NoHitBid>
    package var bidsAfter: PerSide<NoHitBid>
}
