import Alerts
import Baseball
import Foundation

extension LiveBoard {
    /// A game as it stands in `game`, as of `time`: what the board, the API and the stream say.
    package static func snapshot(_ game: GameFollower, at time: Date) -> GameSnapshot {
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
}
