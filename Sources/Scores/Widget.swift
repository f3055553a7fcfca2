import Foundation

/// The widget's view of the day (`GET /api/widget?teams=…`): the day's games of some teams in
/// about 150 bytes each, what a Today widget or a watch face shows, and a `next` hint of when to
/// ask again.
package enum Widget {
    /// One game as the widget shows it.
    package struct Game: Sendable, Hashable, Codable {
        package struct Team: Sendable, Hashable, Codable {
            /// MLB's abbreviation (`CWS`).
            package var team: String
            package var runs: Int
        }

        package var id: String
        package var away: Team
        package var home: Team
        /// The board's status text: `Top 5th`, `Final`, `F/7`, `Postponed (to …)` ...
        package var status: String
        /// scheduled, live or final.
        package var state: String
        /// First pitch (scheduled games only).
        package var start: Date?
        /// Outs in the half-inning (games under way only).
        package var outs: Int?
        /// 1 or 2 in a doubleheader.
        package var game: Int?
        /// The team (MLB abbreviation) whose pitchers are hitless through four innings or more in a
        /// game under way, or have thrown a no-hitter in a final one.
        package var noHitter: String?
        /// That bid's chance of ending as a no-hitter ("54%"), while it is alive and can count.
        package var chance: String? = nil
        /// ABS challenges left, away then home (`[2, 1]`), in a game with ABS under way or over.
        package var abs: [Int]? = nil
    }

    package struct Body: Sendable, Codable {
        package var date: String
        package var games: [Game]
        /// Seconds until it is worth asking again: 10 while a game is under way, 60 while games
        /// are still to start (each scheduled game gives its first pitch), an hour when every game
        /// is over. Made from the games alone, so an unchanged board keeps its `ETag`.
        package var next: Int
        /// Seconds the games are shown behind (a spoiler delay): the board as it stood then.
        package var delay: Int? = nil
    }

    /// The newest day's games on the board involving one of `teams` (franchises; every game when
    /// empty), by start time.
    package static func body(_ all: [GameSnapshot], teams: Set<String>, attemptOuts: Int) -> Body {
        let day = all.map(\.date).max() ?? ""
        let games = all.filter {
            $0.date == day
                && (teams.isEmpty || teams.contains($0.away.franchise) || teams.contains($0.home.franchise))
        }
        return Body(date: day, games: games.map { game($0, attemptOuts: attemptOuts) }, next: next(games))
    }

    static func game(_ game: GameSnapshot, attemptOuts: Int) -> Game {
        let hitless = game.bids.first {
            $0.hitless
                && ((game.status == .live && $0.status == "alive" && $0.outs >= attemptOuts)
                    || $0.status == "official")
        }
        var shown = Game(
            id: game.id, away: .init(team: game.away.abbreviation, runs: game.away.runs),
            home: .init(team: game.home.abbreviation, runs: game.home.runs), status: game.statusText,
            state: game.status.rawValue, start: game.status == .scheduled ? game.startTime : nil,
            outs: game.status == .live ? game.outs : nil, game: game.gameNumber,
            noHitter: hitless.map(\.team), chance: hitless.flatMap(\.chance?.text))
        if let challenges = game.challenges, game.status != .scheduled {
            shown.abs = [challenges.away.remaining, challenges.home.remaining]
        }
        return shown
    }

    static func next(_ games: [GameSnapshot]) -> Int {
        if games.contains(where: { $0.status == .live }) { return 10 }
        if games.contains(where: { $0.status == .scheduled }) { return 60 }
        return 3600
    }
}
