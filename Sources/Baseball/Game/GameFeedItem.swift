import Foundation

/// What a source says about one game, in order. Every source — a replayed Retrosheet day, the
/// Stats API, the fake Stats API — says the same things the same way, once per change; the game's
/// follower turns them into game events.
package enum GameFeedItem: Sendable, Hashable, Codable {
    /// The game as scheduled: teams, date, players' names, broadcasts, first pitch. Said first,
    /// and again whenever any of it changes.
    case scheduled(GameInfo, start: Date)
    /// The starting lineups. Said again with other lineups (a source correcting itself), the game
    /// is followed again from the start.
    case lineups([Appearance], homeBatsFirst: Bool)
    /// Updates that follow those said before.
    case updates([GameUpdate])
    /// The whole list of updates again, changed before its end: a play re-scored or removed.
    case revised([GameUpdate])
    /// A new status; a final one carries what only the end of a game says.
    case status(GameStatus, result: GameResult?)
    /// The plate appearance in progress between plays: the count after a pitch.
    case atBat(AtBat)
    /// The game's ABS challenges as they now stand: each team's counters and every challenged
    /// pitch (said whole each time they change).
    case challenges(ABSChallenges)
}

/// Where sources send what they say: the followers of the day's games.
package protocol GameFeedSink: Sendable {
    /// Takes `item` about game `gameID` at `time`, and returns once the game's follower has
    /// applied it and everything downstream has its events.
    func receive(_ item: GameFeedItem, gameID: String, at time: Date) async throws
}
