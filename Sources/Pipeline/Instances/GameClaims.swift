import Baseball

/// When several instances share the games (one follows each game at a time): whether this instance
/// says what happens in a game now.
package protocol GameClaims: Sendable {
    /// Whether this instance says `gameID` now: it does already, it has just taken it up (with what
    /// was said of it before, to go on from), or another instance does.
    func claim(_ gameID: String) async throws -> GameClaim
    /// The game is over: nobody needs to follow it any more.
    func finished(_ gameID: String) async throws
}

/// See ``GameClaims/claim(_:)``.
package enum GameClaim: Sendable {
    case held
    case takenUp(said: [GameFeedItem])
    case elsewhere
}
