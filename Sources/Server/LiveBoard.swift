import Alerts
import Baseball
import Foundation
import Pipeline
import Storage
import Synchronization

/// What the API and the stream say about a game: teams, status, inning, score, and each
/// pitching side's no-hit bid.
package struct GameSnapshot: Sendable, Hashable, Codable {
    package struct Team: Sendable, Hashable, Codable {
        /// MLB's abbreviation, what a fan reads (`CWS`); the code for a club MLB does not list.
        package var abbreviation: String
        /// The franchise (Retrosheet's id of today): what favourite teams name.
        package var franchise: String
        /// "Chicago White Sox".
        package var name: String
        /// "White Sox".
        package var nickname: String
        package var runs: Int
        package var hits: Int
        package var errors: Int
        /// Runs by inning, `x` for a bottom half not batted in a final game.
        package var linescore: [String]
    }

    /// Who is on the mound and at the plate in a game under way, and the count.
    package struct Matchup: Sendable, Hashable, Codable {
        package var pitcher: String
        package var batter: String
        /// The pitcher's line so far.
        package var pitcherLine: PitcherLineView?
        /// Balls and strikes on the batter, when the source has them: 0-0 for a batter just up.
        package var balls: Int?
        package var strikes: Int?
    }

    /// The starting pitchers before the first pitch: from the lineups when they are out
    /// (`confirmed`), otherwise the schedule's probable pitchers.
    package struct Starters: Sendable, Hashable, Codable {
        package var away: String?
        package var home: String?
        package var confirmed: Bool
    }

    /// The pitchers of record of a final game, where the source gives them.
    package struct Decisions: Sendable, Hashable, Codable {
        package var winning: String?
        package var losing: String?
        package var save: String?
    }

    package struct Bid: Sendable, Hashable, Codable {
        /// The side in the field: `home` or `away`.
        package var side: String
        /// The team in the field, as a fan reads it (`CWS`).
        package var team: String
        package var pitchers: [String]
        package var currentPitcher: String
        package var outs: Int
        package var innings: Int
        /// The outs as innings in words: "4 1/3 innings".
        package var hitlessText: String
        package var hitless: Bool
        package var perfect: Bool
        /// alive, broken-up, official or not-official.
        package var status: String
        /// The line of each of the bid's pitchers, in order.
        package var lines: [PitcherLineView]
        /// The first hit, once the bid is broken up.
        package var brokenUpBy: BrokenUp?
    }

    /// The hit that broke up a bid, and its words: "Eric Sogard singles to center field off Kenta
    /// Maeda with nobody out in the top of the 9th".
    package struct BrokenUp: Sendable, Hashable, Codable {
        package var batter: String
        package var pitcher: String
        /// single, double, triple or home run.
        package var hit: String
        package var inning: Int
        /// Outs in the inning before the hit.
        package var outs: Int
        package var text: String
    }

    package enum Status: String, Sendable, Hashable, Codable {
        case scheduled
        case live
        case final
    }

    package var id: String
    package var date: String
    /// 1 or 2 for the games of a doubleheader, nil for a single game.
    package var gameNumber: Int?
    package var startTime: Date
    package var status: Status
    package var away: Team
    package var home: Team
    package var inning: Int
    /// top or bottom.
    package var half: String
    package var outs: Int
    /// What a scoreboard shows for the game's state: `Scheduled`, `Warm-up`, `Top 5th`, `Bot 9th`,
    /// `Mid 5th` and `End 5th` between halves, `Delayed`, `Postponed (to 2020-08-26)`, `Suspended
    /// (resumes 2020-08-26)`, `Final`, or `F/7`, `F/10` for a final game not of its scheduled length.
    package var statusText: String
    /// The status with the outs during a half, in words: "Top 5th, 1 out", "Bot 9th, nobody out",
    /// "Mid 5th", "Final".
    package var situation: String
    package var scheduledInnings: Int
    /// First, second and third: whether a runner is on (all false unless the game is under way).
    package var bases: [Bool]
    package var matchup: Matchup?
    /// Before the first pitch: who is to start.
    package var starters: Starters?
    package var decisions: Decisions?
    package var bids: [Bid]
    package var broadcasts: [String]
    package var updatedAt: Date

    /// A side hitless through at least `minimumOuts`, in a game still on or just won without a hit.
    package func attempts(minimumOuts: Int) -> [Bid] {
        bids.filter { $0.hitless && $0.outs >= minimumOuts && ($0.status == "alive" || $0.status == "official") }
    }
}

/// A game's score line, the stream's `score` event: what a scoreboard shows of the game, sent
/// when any of it changes.
package struct ScoreLine: Sendable, Hashable, Codable {
    package struct Side: Sendable, Hashable, Codable {
        /// MLB's abbreviation.
        package var team: String
        package var runs: Int
        package var hits: Int
        package var errors: Int
    }

    package var id: String
    package var status: GameSnapshot.Status
    package var statusText: String
    package var inning: Int
    package var half: String
    package var away: Side
    package var home: Side

    package init(_ game: GameSnapshot) {
        id = game.id
        status = game.status
        statusText = game.statusText
        inning = game.inning
        half = game.half
        away = Side(team: game.away.abbreviation, runs: game.away.runs, hits: game.away.hits, errors: game.away.errors)
        home = Side(team: game.home.abbreviation, runs: game.home.runs, hits: game.home.hits, errors: game.home.errors)
    }
}

/// One pitcher's line as the API gives it.
package struct PitcherLineView: Sendable, Hashable, Codable {
    package var id: String
    package var name: String
    /// `6.2`: six innings and two outs.
    package var inningsPitched: String
    package var outs: Int
    package var hits: Int
    package var runs: Int
    package var earnedRuns: Int
    package var walks: Int
    package var strikeouts: Int
    package var homeRuns: Int
    package var battersFaced: Int
    /// Nil when the source does not give pitches.
    package var pitches: Int?

    package init(_ line: PitcherLine, info: GameInfo) {
        id = "\(line.pitcher)"
        name = info.name(of: line.pitcher)
        inningsPitched = line.inningsPitched
        outs = line.outs
        hits = line.hits
        runs = line.runs
        earnedRuns = line.earnedRuns
        walks = line.walks
        strikeouts = line.strikeouts
        homeRuns = line.homeRuns
        battersFaced = line.battersFaced
        pitches = line.pitches
    }
}

/// A game in full: the board's snapshot, each side's pitchers and the play-by-play.
package struct GameDetail: Sendable, Codable {
    package struct Pitchers: Sendable, Codable {
        package var away: [PitcherLineView]
        package var home: [PitcherLineView]
    }

    package var game: GameSnapshot
    package var pitchers: Pitchers
    package var plays: [PlayByPlayEntry]
}

/// The day's games as they stand, fed by the game changes of any source, read by the API.
package final class LiveBoard: Sendable {
    private struct Entry {
        var snapshot: GameSnapshot
        /// The game's follower as of the snapshot (its updates, for the play-by-play).
        var follower: GameFollower
    }

    private let games = Mutex<(entries: [String: Entry], version: UInt64)>(([:], 0))

    package init() {}

    /// Changes recorded so far: what a cache of the board's views compares.
    package var version: UInt64 { games.withLock { $0.version } }

    /// Records a game as it stands after `change`: its snapshot, and its score line when that
    /// changed (or is new).
    @discardableResult
    package func record(_ change: GameChange) -> (snapshot: GameSnapshot, score: ScoreLine?)? {
        let game = change.game
        guard game.isScheduled else { return nil }
        let snapshot = Self.snapshot(game, at: change.time)
        let score = ScoreLine(snapshot)
        let before = games.withLock {
            let before = $0.entries[snapshot.id].map { ScoreLine($0.snapshot) }
            $0.entries[snapshot.id] = Entry(snapshot: snapshot, follower: game)
            $0.version &+= 1
            return before
        }
        return (snapshot, before == score ? nil : score)
    }

    static func snapshot(_ game: GameFollower, at time: Date) -> GameSnapshot {
        let info = game.info
        func bid(_ bid: NoHitBid) -> GameSnapshot.Bid {
            let status: String
            switch bid.status {
            case .alive: status = "alive"
            case .brokenUp: status = "broken-up"
            case .official: status = "official"
            case .notOfficial: status = "not-official"
            }
            let brokenUp = bid.firstHit.map { hit -> GameSnapshot.BrokenUp in
                .init(
                    batter: info.name(of: hit.batter), pitcher: info.name(of: hit.pitcher),
                    hit: Words.hit(hit.eventType) ?? "hit", inning: hit.inning, outs: hit.outsInInning,
                    text: PlayDescription.bidPlay(hit, name: info.name(of:)))
            }
            return .init(
                side: bid.pitchingSide == .home ? "home" : "away", team: info.team(bid.pitchingSide).abbreviation,
                pitchers: bid.pitchers.map(info.name(of:)),
                currentPitcher: info.name(of: bid.currentPitcher),
                outs: bid.outs, innings: bid.hitlessInnings, hitlessText: Words.innings(outs: bid.outs),
                hitless: bid.isHitless,
                perfect: bid.isHitless && bid.isPerfect,
                status: status,
                lines: bid.pitchers.compactMap { pitcher in
                    game.pitcherLines.line(of: pitcher).map { PitcherLineView($0, info: info) }
                },
                brokenUpBy: brokenUp)
        }
        let state = game.state
        let status: GameSnapshot.Status
        switch game.status.phase {
        case .final: status = .final
        case .scheduled, .warmup, .postponed, .cancelled: status = .scheduled
        case .live, .delayed, .suspended: status = .live
        }
        let bids = game.bids.map { [bid($0.home), bid($0.away)] } ?? []
        let final = game.isFinal
        func team(_ side: Side) -> GameSnapshot.Team {
            let club = info.team(side).club
            return GameSnapshot.Team(
                abbreviation: club.abbreviation, franchise: club.franchise, name: club.name,
                nickname: club.nickname, runs: state?.score[side] ?? 0,
                // Hits and errors: the other side's pitching line (hits allowed), this side's fielding.
                hits: state?.pitching(side.opponent).hits ?? 0, errors: state?.pitching(side).errors ?? 0,
                linescore: game.linescore.cells(side, final: final))
        }
        let scheduledInnings = game.result?.scheduledInnings ?? 9
        let underway = game.status.isUnderway && state != nil
        let matchup = state.flatMap { state -> GameSnapshot.Matchup? in
            guard underway, !state.currentBatter.isNone else { return nil }
            // The count is the latest record's, unless that record ended the plate appearance.
            var count = state.count
            if let last = game.updates.last(where: { if case .play = $0 { true } else { false } }),
                case .play(let record) = last, record.play?.eventType.endsPlateAppearance == true
            {
                count = .zero
            }
            return GameSnapshot.Matchup(
                pitcher: info.name(of: state.pitcher), batter: info.name(of: state.currentBatter),
                pitcherLine: game.pitcherLines.line(of: state.pitcher).map { PitcherLineView($0, info: info) },
                balls: count.map { Int($0.balls) }, strikes: count.map { Int($0.strikes) })
        }
        var starters: GameSnapshot.Starters?
        if status == .scheduled {
            let lineup = game.starters.filter { $0.position == Position.pitcher }
            if !lineup.isEmpty {
                let away = lineup.first { $0.side == .away }.map { info.name(of: $0.player) }
                let home = lineup.first { $0.side == .home }.map { info.name(of: $0.player) }
                starters = .init(away: away, home: home, confirmed: true)
            } else if let probable = info.probablePitchers {
                starters = .init(
                    away: probable.away.map { info.players[$0] ?? $0 },
                    home: probable.home.map { info.players[$0] ?? $0 }, confirmed: false)
            }
        }
        let decisions = game.result.flatMap { result -> GameSnapshot.Decisions? in
            guard final, result.winningPitcher != nil || result.losingPitcher != nil else { return nil }
            return GameSnapshot.Decisions(
                winning: result.winningPitcher.map(info.name(of:)), losing: result.losingPitcher.map(info.name(of:)),
                save: result.savePitcher.map(info.name(of:)))
        }
        let statusText = Self.statusText(
            game.status, state: state, inningsPlayed: game.linescore.innings, scheduledInnings: scheduledInnings)
        let situation =
            game.status.phase == .live && (state?.outs ?? 3) < 3
            ? "\(statusText), \(Words.outs(state?.outs ?? 0))" : statusText
        return GameSnapshot(
            id: info.id, date: info.date,
            gameNumber: info.id.last.flatMap { Int(String($0)) }.flatMap { $0 > 0 ? $0 : nil },
            startTime: game.start ?? time, status: status,
            away: team(.away), home: team(.home),
            inning: state?.inning ?? 1, half: state?.battingSide == .home ? "bottom" : "top", outs: state?.outs ?? 0,
            statusText: statusText, situation: situation, scheduledInnings: scheduledInnings,
            bases: underway
                ? [state!.runners.first, state!.runners.second, state!.runners.third].map { !$0.isNone }
                : [false, false, false],
            matchup: matchup, starters: starters, decisions: decisions,
            // The home side pitches to the away batters first.
            bids: bids, broadcasts: info.broadcasts.map(\.name), updatedAt: time)
    }

    /// A scoreboard's words for where a game stands (see `GameSnapshot.statusText`).
    static func statusText(
        _ status: GameStatus, state: GameState?, inningsPlayed: Int, scheduledInnings: Int
    ) -> String {
        switch status.phase {
        case .scheduled: return "Scheduled"
        case .warmup: return "Warm-up"
        case .live:
            guard let state else { return "Live" }
            return Words.boardInning(state.inning, state.battingSide, outs: state.outs)
        case .delayed: return status.detail.map { "Delayed: \($0)" } ?? "Delayed"
        case .suspended: return status.resumesOn.map { "Suspended (resumes \($0))" } ?? "Suspended"
        case .postponed: return status.resumesOn.map { "Postponed (to \($0))" } ?? "Postponed"
        case .cancelled: return "Cancelled"
        case .final:
            let innings = inningsPlayed > 0 ? inningsPlayed : state?.inning ?? scheduledInnings
            return innings == scheduledInnings ? "Final" : "F/\(innings)"
        }
    }

    /// Every game of the day by start time.
    package var all: [GameSnapshot] {
        games.withLock { $0.entries.values.map(\.snapshot) }.sorted { ($0.startTime, $0.id) < ($1.startTime, $1.id) }
    }

    package func game(id: String) -> GameSnapshot? {
        games.withLock { $0.entries[id]?.snapshot }
    }

    /// A game with every pitcher's line and the play-by-play (`GET /api/games/{id}`).
    package func detail(id: String) -> GameDetail? {
        guard let entry = games.withLock({ $0.entries[id] }) else { return nil }
        let info = entry.follower.info
        let lines = entry.follower.pitcherLines
        return GameDetail(
            game: entry.snapshot,
            pitchers: .init(
                away: lines.lines(of: .away).map { PitcherLineView($0, info: info) },
                home: lines.lines(of: .home).map { PitcherLineView($0, info: info) }),
            plays: entry.follower.playByPlay)
    }
}

/// The live board and the live stream as a consumer of game changes: the change's moments go on
/// the stream (after the alert publisher stored them: it comes first), then the game as it
/// stands. The same for every source.
package struct LiveConsumer: GameChangeConsumer {
    package let board: LiveBoard
    package let feed: LiveFeed

    package init(board: LiveBoard, feed: LiveFeed) {
        self.board = board
        self.feed = feed
    }

    /// Stream ids per item of the shared game log: item N's events are N × 4096 + 0, 1, 2 ...
    package static let idsPerItem = 4096

    package func consume(_ change: GameChange) async throws {
        // Numbered from the item's place in the shared game log when there is one, so that every
        // instance gives the same event the same id (Last-Event-ID resumes on any of them).
        var next = change.sequence.map { Int($0) * Self.idsPerItem }
        func id() -> Int? {
            defer { next = next.map { $0 + 1 } }
            return next
        }
        // A no-hit bid's moments; a score alert's news is the game's `score` event.
        for moment in change.moments where moment.kind.isBid {
            feed.publish(moment, game: change.game.info, at: change.time, id: id())
        }
        guard let recorded = board.record(change) else { return }
        if let score = recorded.score { feed.publish(score, id: id()) }
        feed.publish(recorded.snapshot, id: id())
    }
}

extension LiveFeed {
    /// A moment as the stream's `moment` event (numbered `id` when given).
    package func publish(_ moment: Moment, game: GameInfo, at time: Date, id: Int? = nil) {
        let view = MomentView(StoredMoment(moment: moment, game: game, occurredAt: time))
        if let data = try? API.encoder.encode(view) {
            publish(.moment, data: String(decoding: data, as: UTF8.self), id: id)
        }
    }

    /// A game's new score line, as the stream's `score` event.
    package func publish(_ score: ScoreLine, id: Int? = nil) {
        if let data = try? API.encoder.encode(score) {
            publish(.score, data: String(decoding: data, as: UTF8.self), key: score.id, id: id)
        }
    }

    /// A game as it stands, as the stream's `game` event.
    package func publish(_ snapshot: GameSnapshot, id: Int? = nil) {
        if let data = try? API.encoder.encode(snapshot) {
            publish(.game, data: String(decoding: data, as: UTF8.self), key: snapshot.id, id: id)
        }
    }
}
