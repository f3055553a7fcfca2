import Alerts
import Baseball
import Foundation

extension LiveBoard {
    /// A game as it stands in `game`, as of `time`: what the board, the API and the stream say.
    package static func snapshot(
        _ game: GameFollower, at time: Date, winExpectancy: WinExpectancy? = nil
    ) -> GameSnapshot {
        let info = game.info
        // A pitcher's count is his line's and the pitches of the plate appearance under way.
        let inProgress = game.atBat.map(\.pitches) ?? 0
        let pitchingNow = game.state.map { state in
            game.atBat != nil && state.outs >= 3 ? state.fielder(1, of: state.battingSide) : state.pitcher
        }
        func lineView(_ pitcher: PlayerID) -> PitcherLineView? {
            game.pitcherLines.line(of: pitcher).map { line in
                var view = PitcherLineView(line, info: info)
                if pitcher == pitchingNow, inProgress > 0 { view.pitches = view.pitches.map { $0 + inProgress } }
                return view
            }
        }
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
            // Why it cannot count: while alive, what no play can change; once over, what the rules said.
            var unofficial: String?
            if case .notOfficial(let reason) = bid.status {
                unofficial = MessageStrings.english.reasons[reason]
            } else if bid.isAlive, let reason = game.cannotCount {
                unofficial = MessageStrings.english.cannotCountWhy[reason]
            }
            // The chance its alerts give (the follower's odds, its pitchers' pitches, its season).
            let chance =
                bid.isAlive && bid.outs > 0 && unofficial == nil
                ? game.context.odds?.chance(
                    outs: bid.outs, pitches: game.pitcherLines.pitches(of: bid.pitchingSide),
                    season: Int(info.date.prefix(4))) : nil
            return .init(
                side: bid.pitchingSide == .home ? "home" : "away", team: info.team(bid.pitchingSide).abbreviation,
                pitchers: bid.pitchers.map(info.name(of:)),
                currentPitcher: info.name(of: bid.currentPitcher),
                outs: bid.outs, innings: bid.hitlessInnings, hitlessText: Words.innings(outs: bid.outs),
                hitless: bid.isHitless,
                perfect: bid.isHitless && bid.isPerfect,
                status: status,
                lines: bid.pitchers.compactMap(lineView),
                brokenUpBy: brokenUp, chance: chance.map(ChanceView.init), unofficial: unofficial)
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
        let scheduledInnings = game.result?.scheduledInnings ?? info.scheduledInnings ?? 9
        let underway = game.status.isUnderway && state != nil
        // Between halves (the third out made, the next half not begun): no batter, no pitcher, no
        // runners, no count — the three due up instead. Once the source says a pitch of the next
        // half (before its first play), that half is under way: its batter, pitcher and count.
        let halfOver = underway && (state?.outs ?? 0) >= 3
        let nextHalf = halfOver && game.atBat != nil
        let betweenHalves = halfOver && !nextHalf
        // The half the board shows: the state's, or the next one.
        let shown = state.map { state -> (inning: Int, side: Side, outs: Int) in
            guard nextHalf else { return (state.inning, state.battingSide, state.outs) }
            let first = state.battingSide == (game.homeBatsFirst ? .home : .away)
            return (first ? state.inning : state.inning + 1, state.battingSide.opponent, 0)
        }
        let matchup = state.flatMap { state -> GameSnapshot.Matchup? in
            guard underway, !betweenHalves, !state.currentBatter.isNone || nextHalf else { return nil }
            let side = nextHalf ? state.battingSide.opponent : state.battingSide
            let pitcher = nextHalf ? state.fielder(1, of: state.battingSide) : state.pitcher
            // The batter is the lineup's one due up: after a play that ended the plate appearance
            // the next in the order (with a count of 0-0), after a pinch hitter the pinch hitter,
            // during a plate appearance its batter.
            var count = state.count
            if let last = game.updates.last(where: { if case .play = $0 { true } else { false } }),
                case .play(let record) = last, record.play?.eventType.endsPlateAppearance == true || nextHalf
            {
                count = .zero
            }
            let due = state.lineup(side).entries[state.nextBattingSlot[side]].player
            var batter = due.isNone ? state.currentBatter : due
            // Pitches since the last play, as the source said them: the count, the last pitch.
            var lastPitch: String?
            var zone: [PitchMark]?
            if let atBat = game.atBat {
                zone = atBat.marks.isEmpty ? nil : atBat.marks
                count = PitchCount(
                    balls: UInt8(clamping: min(atBat.balls, 3)), strikes: UInt8(clamping: min(atBat.strikes, 2)))
                if !atBat.batter.isNone { batter = atBat.batter }
                lastPitch = atBat.lastPitch.map { pitch in
                    atBat.lastPitchSpeed.map { "\(pitch), \(Int($0.rounded())) mph" } ?? pitch
                }
            }
            return GameSnapshot.Matchup(
                pitcher: info.name(of: pitcher), batter: info.name(of: batter),
                pitcherLine: lineView(pitcher),
                balls: count.map { Int($0.balls) }, strikes: count.map { Int($0.strikes) },
                batterLine: game.battingLines.line(of: batter, side: side).flatMap(Self.batterLine),
                lastPitch: lastPitch, zone: zone)
        }
        let dueUp = state.flatMap { state -> GameSnapshot.DueUp? in
            guard betweenHalves else { return nil }
            let side = state.battingSide.opponent
            let lineup = state.lineup(side)
            let first = state.nextBattingSlot[side]
            let batters = (0..<3).map { lineup.entries[(first - 1 + $0) % 9 + 1].player }.filter { !$0.isNone }
            return GameSnapshot.DueUp(team: info.team(side).abbreviation, batters: batters.map(info.name(of:)))
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
        let statusText =
            nextHalf && game.status.phase == .live
            ? Words.boardInning(shown?.inning ?? 1, shown?.side ?? .away, outs: 0)
            : Self.statusText(
                game.status, state: state, inningsPlayed: game.linescore.innings, scheduledInnings: scheduledInnings)
        let situation =
            game.status.phase == .live && (shown?.outs ?? 3) < 3
            ? "\(statusText), \(Words.outs(shown?.outs ?? 0))" : statusText
        var snapshot = GameSnapshot(
            id: info.id, date: info.date,
            gameNumber: info.id.last.flatMap { Int(String($0)) }.flatMap { $0 > 0 ? $0 : nil },
            startTime: game.start ?? time, status: status,
            away: team(.away), home: team(.home),
            inning: shown?.inning ?? 1, half: shown?.side == .home ? "bottom" : "top", outs: shown?.outs ?? 0,
            statusText: statusText, situation: situation, scheduledInnings: scheduledInnings,
            bases: underway && !halfOver
                ? [state!.runners.first, state!.runners.second, state!.runners.third].map { !$0.isNone }
                : [false, false, false],
            matchup: matchup, starters: starters, dueUp: dueUp, decisions: decisions,
            // The home side pitches to the away batters first.
            bids: bids, broadcasts: info.broadcasts.map(\.name), updatedAt: time)
        snapshot.venue = info.venue
        snapshot.challenges = game.challenges.map { Self.challenges($0, info: info) }
        // A game under way: the home team's chance now, from history, and the leverage (none
        // when the home team bats first: the table counts the side that bats last).
        if let table = winExpectancy, snapshot.status == .live, !game.homeBatsFirst {
            let side: Side = snapshot.half == "bottom" ? .home : .away
            let bases = snapshot.bases.enumerated().reduce(0) { $0 | ($1.element ? 1 << $1.offset : 0) }
            let lead = snapshot.home.runs - snapshot.away.runs
            snapshot.homeWin = table.homeWin(
                afterInning: snapshot.inning, battingSide: side, outs: snapshot.outs, bases: bases, homeLead: lead,
                scheduledInnings: scheduledInnings)
            if snapshot.outs < 3 {
                snapshot.leverage = table.leverage(
                    WinExpectancy.state(
                        inning: snapshot.inning, battingSide: side, outs: snapshot.outs, bases: bases,
                        homeLead: lead, scheduledInnings: scheduledInnings))
            }
        }
        return snapshot
    }

    /// A game's ABS challenges as the API gives them: the counters, and each challenged pitch in
    /// words.
    static func challenges(_ abs: ABSChallenges, info: GameInfo) -> GameSnapshot.Challenges {
        func counters(_ side: Side) -> GameSnapshot.Challenges.Counters {
            let counters = abs.counters[side]
            return .init(
                team: info.team(side).abbreviation, remaining: counters.remaining, won: counters.won,
                lost: counters.lost)
        }
        let pitches = abs.challenges.map { challenge -> GameSnapshot.Challenges.Pitch in
            let team = info.team(challenge.side).abbreviation
            let challenger = challenge.challenger.isNone ? "the \(team) catcher" : info.name(of: challenge.challenger)
            let before = challenge.callBefore == .ball ? "ball" : "called strike"
            let after = challenge.callAfter == .ball ? "ball" : "strike"
            let count = "\(challenge.balls)-\(challenge.strikes)"
            let text =
                "\(Words.boardInning(challenge.inning, challenge.battingSide, outs: 0)): \(challenger) (\(team), "
                + "\(challenge.role.rawValue)) challenged the \(before) on the \(Words.ordinal(challenge.pitchNumber)) pitch"
                + (challenge.role == .batter ? ": " : " to \(info.name(of: challenge.batter)): ")
                + (challenge.overturned ? "overturned, \(after) (\(count))" : "upheld (\(count))")
            return .init(
                inning: challenge.inning, half: Words.half(challenge.battingSide),
                plateAppearance: challenge.plateAppearance, pitchNumber: challenge.pitchNumber,
                batter: info.name(of: challenge.batter), pitcher: info.name(of: challenge.pitcher),
                challenger: challenger, role: challenge.role.rawValue, team: team,
                callBefore: challenge.callBefore.rawValue, callAfter: challenge.callAfter.rawValue,
                overturned: challenge.overturned, count: count, text: text)
        }
        return .init(away: counters(.away), home: counters(.home), pitches: pitches)
    }

    /// A batter's day so far as a scoreboard gives it: `1-for-2, HR, 2 RBI, BB`; nil before his
    /// first plate appearance.
    static func batterLine(_ line: BattingLine) -> String? {
        guard line.plateAppearances > 0 else { return nil }
        let extras = [
            (line.doubles, "2B"), (line.triples, "3B"), (line.homeRuns, "HR"), (line.runsBattedIn, "RBI"),
            (line.walks, "BB"), (line.hitByPitch, "HBP"), (line.stolenBases, "SB"),
        ].filter { $0.0 > 0 }.map { $0.0 > 1 ? "\($0.0) \($0.1)" : $0.1 }
        return (["\(line.hits)-for-\(line.atBats)"] + extras).joined(separator: ", ")
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
