import Alerts
import Baseball
import Foundation
import Synchronization

/// The day's games as they stand, fed by the game changes of any source, read by the API.
package final class LiveBoard: Sendable {
    private struct Entry {
        var snapshot: GameSnapshot
        /// The game's follower as of the snapshot (its updates, for the play-by-play).
        var follower: GameFollower
    }

    private let games = Mutex<(entries: [String: Entry], version: UInt64)>(([:], 0))
    /// Each game's snapshots of the last `historySpan`, with the time each was recorded (and the
    /// last one before that span): what a surface held back by a spoiler delay shows.
    private let history = Mutex<[String: [(time: Date, entry: Entry)]]>([:])
    /// How far back the board can be read (the longest spoiler delay).
    package static let historySpan: TimeInterval = 300
    /// History's win expectancy, for the chance on the cards and the play-by-play; none without.
    package let winExpectancy: WinExpectancy?

    package init(winExpectancy: WinExpectancy? = nil) {
        self.winExpectancy = winExpectancy
    }

    /// Changes recorded so far: what a cache of the board's views compares.
    package var version: UInt64 { games.withLock { $0.version } }

    /// Records a game as it stands in `game` at `time`: its snapshot, and its score line when
    /// that changed (or is new).
    @discardableResult
    package func record(_ game: GameFollower, at time: Date) -> (snapshot: GameSnapshot, score: ScoreLine?)? {
        guard game.isScheduled else { return nil }
        let snapshot = Self.snapshot(game, at: time, winExpectancy: winExpectancy)
        let score = ScoreLine(snapshot)
        let before = games.withLock {
            let before = $0.entries[snapshot.id].map { ScoreLine($0.snapshot) }
            $0.entries[snapshot.id] = Entry(snapshot: snapshot, follower: game)
            $0.version &+= 1
            return before
        }
        history.withLock { history in
            var kept = history[snapshot.id] ?? []
            // Times only move on within a game (an item from another instance's clock never
            // makes a state older than one already shown).
            kept.append((max(time, kept.last?.time ?? time), Entry(snapshot: snapshot, follower: game)))
            history[snapshot.id] = kept
            // Older than the span, only the last one stays: the state the span starts in. Every
            // game's, so a game over long ago keeps one snapshot, not its last five minutes.
            let cutoff = time.addingTimeInterval(-Self.historySpan)
            for (id, states) in history where states.count > 1 && states[1].time <= cutoff {
                let firstInSpan = states.firstIndex { $0.time > cutoff } ?? states.count
                history[id] = Array(states[(firstInSpan - 1)...])
            }
        }
        return (snapshot, before == score ? nil : score)
    }

    /// Every game as it stood at `time` (at most `historySpan` ago, for a spoiler delay): each
    /// game's last snapshot recorded at or before it, by start time; a game not yet on the board
    /// then is left out.
    package func all(asOf time: Date) -> [GameSnapshot] {
        history.withLock { history in
            history.values.compactMap { kept in kept.last { $0.time <= time }?.entry.snapshot }
        }.sorted { ($0.startTime, $0.id) < ($1.startTime, $1.id) }
    }

    /// Every game of the day by start time.
    package var all: [GameSnapshot] {
        games.withLock { $0.entries.values.map(\.snapshot) }.sorted { ($0.startTime, $0.id) < ($1.startTime, $1.id) }
    }

    /// The results of the board's finished games, for standings (a suspended game on the day it
    /// was completed).
    package var outcomes: [GameOutcome] {
        games.withLock { $0.entries.values.map(\.follower) }.compactMap { follower in
            guard follower.isFinal, let state = follower.state else { return nil }
            let info = follower.info
            return GameOutcome(
                gameID: follower.gameID, date: info.completedOn ?? info.date, away: info.away.club,
                home: info.home.club, awayRuns: state.score.away, homeRuns: state.score.home)
        }
    }

    /// The game's follower as of its snapshot.
    package func follower(id: String) -> GameFollower? {
        games.withLock { $0.entries[id]?.follower }
    }

    package func game(id: String) -> GameSnapshot? {
        games.withLock { $0.entries[id]?.snapshot }
    }

    /// A game with every pitcher's line and the play-by-play (`GET /api/games/{id}`).
    package func detail(id: String) -> GameDetail? {
        games.withLock({ $0.entries[id] }).map(detail)
    }

    /// A game in full as it stood at `time` (at most `historySpan` ago, for a spoiler delay); nil
    /// when it was not on the board then.
    package func detail(id: String, asOf time: Date) -> GameDetail? {
        history.withLock { $0[id]?.last { $0.time <= time }?.entry }.map(detail)
    }

    private func detail(_ entry: Entry) -> GameDetail {
        let info = entry.follower.info
        let lines = entry.follower.pitcherLines
        return GameDetail(
            game: entry.snapshot,
            pitchers: .init(
                away: lines.lines(of: .away).map { PitcherLineView($0, info: info) },
                home: lines.lines(of: .home).map { PitcherLineView($0, info: info) }),
            box: BoxScoreView(entry.follower), scoring: entry.follower.playByPlay.filter(\.scoring),
            plays: winExpectancy.flatMap {
                entry.follower.homeBatsFirst ? nil : Self.chances(entry.follower, table: $0)
            }
                ?? entry.follower.playByPlay)
    }

    /// The play-by-play with the home team's chance after each play and the leverage before it
    /// (none for a game whose home team bats first: the table counts the side that bats last).
    static func chances(_ follower: GameFollower, table: WinExpectancy) -> [PlayByPlayEntry] {
        let scheduled = follower.info.scheduledInnings ?? 9
        var plays = follower.playByPlay
        // The last play, not a player entering after it (who carries its number).
        let highest = plays.map(\.number).max() ?? 0
        let lastPlay = highest > 0 ? plays.firstIndex { $0.number == highest } : nil
        var before = WinExpectancy.state(
            inning: 1, battingSide: .away, outs: 0, bases: 0, homeLead: 0, scheduledInnings: scheduled)
        var number = 0
        for index in plays.indices where plays[index].number != number {
            let play = plays[index]
            number = play.number
            let side: Side = play.half == "bottom" ? .home : .away
            let lead = play.homeScore - play.awayScore
            plays[index].leverage = table.leverage(before)
            if index == lastPlay, follower.isFinal {
                plays[index].homeWin = lead > 0 ? 1 : lead < 0 ? 0 : 0.5
            } else {
                plays[index].homeWin = table.homeWin(
                    afterInning: play.inning, battingSide: side, outs: play.outs, bases: play.bases, homeLead: lead,
                    scheduledInnings: scheduled)
            }
            before =
                play.outs >= 3
                ? WinExpectancy.state(
                    inning: side == .away ? play.inning : play.inning + 1, battingSide: side.opponent, outs: 0,
                    bases: 0, homeLead: lead, scheduledInnings: scheduled)
                : WinExpectancy.state(
                    inning: play.inning, battingSide: side, outs: play.outs, bases: play.bases, homeLead: lead,
                    scheduledInnings: scheduled)
        }
        return plays
    }
}
