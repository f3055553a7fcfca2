import Baseball
import Foundation

/// Follows one game from what its source says (`GameFeedItem`s): applies each update once to one
/// engine, and names what happened in `GameEvent`s — plays, half-innings, score changes, status
/// changes, the final line, the moments of both no-hit bids, re-scorings. The same for every
/// source. Pure: no clock, no I/O.
///
/// An update the engine refuses stops the game there: it keeps what came before (a `problem`
/// event says why) until the source sends lineups or a revised list that fit.
package struct GameFollower: Sendable {
    package let gameID: String
    package private(set) var info: GameInfo
    /// The first pitch as scheduled, when known.
    package private(set) var start: Date?
    package private(set) var status = GameStatus(.scheduled)
    /// Nil until the lineups are in.
    package private(set) var engine: GameEngine?
    /// The updates applied so far, in order.
    package private(set) var updates: [GameUpdate] = []
    package private(set) var starters: [Appearance] = []
    package private(set) var homeBatsFirst = false
    /// What the end of the game said, once it is over.
    package private(set) var result: GameResult?
    /// Whether the game ended by the rules with its last play (the moment the last out, or a
    /// walk-off, was made), before its source said it was final.
    package private(set) var endedByRule = false
    /// Why the game is followed no further, if an update did not fit.
    package private(set) var problem: String?
    /// Runs by inning of the updates applied (kept here, off the engine's path that exports and
    /// bid reports take; a re-scoring builds it again with the game).
    package private(set) var linescore = RunsByInning()
    /// Each pitcher's line so far (kept here with the linescore, off the engine's path).
    package private(set) var pitcherLines = PitcherLines()
    /// Each batter's line so far, in batting order (the box score's table, with the pitchers').
    package private(set) var battingLines = BattingLines()
    /// Stolen bases, strikeouts, home runs and scoring plays by side (what deals count).
    package private(set) var tally = GameTally()
    /// The play-by-play so far, in words, kept as the plays are applied (a re-scoring builds it
    /// again with the game): what a game page shows, without following the game a second time.
    package private(set) var playByPlay: [PlayByPlayEntry] = []
    /// The plate appearance in progress as the source last said it between plays (the count after
    /// a pitch); nil once a play or substitution is applied after it.
    package private(set) var atBat: AtBat?
    /// The ABS challenges as the source last said them; nil where the game has none.
    package private(set) var challenges: ABSChallenges?
    /// Updates applied by engines of this game, re-scorings included: with none, one per update.
    package private(set) var applications = 0
    /// What the last ``follow(_:context:)`` finished its moments with: the odds of history, and
    /// what each side's no-hitter would mean.
    package private(set) var context = FollowContext()
    /// The last play (not a substitution) against each pitching side: a completed no-hitter's
    /// last out, even when a walk-off came after it.
    private var lastPlayAgainst = PerSide<PlayResult?>(away: nil, home: nil)

    package init(gameID: String) {
        self.gameID = gameID
        let unknown = GameInfo.Team(club: .unlisted("?"))
        info = GameInfo(id: gameID, date: "", away: unknown, home: unknown)
    }

    /// The game as it stands (a game not yet under way has the lineups' state, or none).
    package var state: GameState? { engine?.state }
    package var bids: PerSide<NoHitBid>? { engine?.tracker.bids }
    package var isFinal: Bool { status.phase == .final }
    package var isScheduled: Bool { !info.date.isEmpty }
    /// Innings the game is scheduled for: 9, or 7 in a 2020-2021 doubleheader game.
    package var scheduledInnings: Int { info.scheduledInnings ?? 9 }
    /// Why no bid of this game can count as an official no-hitter whatever happens, when that is
    /// known before it ends: a seven-inning doubleheader game.
    package var cannotCount: UnofficialReason? { scheduledInnings < 9 ? .sevenInningDoubleheader : nil }

    /// What `item` changes, as events in order, each moment finished with `context`: a bid still
    /// alive carries its chance, a completed no-hitter its last out and what it means. With the
    /// odds of history known, every out of a notable bid is a moment (devices may choose to hear
    /// of a bid when its chance passes a share).
    package mutating func follow(_ item: GameFeedItem, context: FollowContext = FollowContext()) -> [GameEvent] {
        self.context = context
        return events(of: item).map { event in
            guard case .moment(let moment) = event else { return event }
            return .moment(finished(moment))
        }
    }

    /// A moment as it is told: its chance from the odds of history (by outs, and by the pitches
    /// thrown at a complete inning, where the source counts them), a completed no-hitter's last
    /// out and meaning.
    private func finished(_ moment: Moment) -> Moment {
        var moment = moment
        // A bid that cannot count has no comparable bids to give it a chance.
        if let odds = context.odds, moment.kind.isBid, moment.kind.bidStillAlive, moment.reason == nil {
            moment.odds = odds.chance(
                outs: moment.outs, pitches: pitcherLines.pitches(of: moment.pitchingSide),
                season: Int(info.date.prefix(4)))
        }
        if moment.kind == .completed {
            moment.lastPlay = lastPlayAgainst[moment.pitchingSide].map { play in
                var text = PlayDescription.text(play, name: info.name(of:))
                while text.hasSuffix(".") { text.removeLast() }
                return text
            }
            moment.meaning = context.meanings[moment.pitchingSide]
        }
        return moment
    }

    private mutating func events(of item: GameFeedItem) -> [GameEvent] {
        switch item {
        case .scheduled(let info, let start):
            let first = !isScheduled
            self.info = info
            self.start = start
            return first ? [.scheduled] : []
        case .lineups(let starters, let homeBatsFirst):
            guard engine != nil else {
                self.starters = starters
                self.homeBatsFirst = homeBatsFirst
                engine = GameEngine(starters: starters, homeBatsFirst: homeBatsFirst)
                enterStarters()
                return [.lineups]
            }
            guard starters != self.starters || homeBatsFirst != self.homeBatsFirst else { return [] }
            return revise(starters: starters, homeBatsFirst: homeBatsFirst, updates: updates)
        case .updates(let list):
            guard engine != nil else {
                return problem(nil, "updates came before the lineups")
            }
            guard problem == nil else { return [] }
            var events: [GameEvent] = []
            for update in list {
                guard apply(update, into: &events) else { break }
            }
            return events
        case .revised(let list):
            guard engine != nil else { return problem(nil, "a revision came before the lineups") }
            return revise(starters: starters, homeBatsFirst: homeBatsFirst, updates: list)
        case .atBat(let atBat):
            // Said after the updates applied so far, in a game under way and not stopped.
            guard engine != nil, problem == nil, !isFinal, atBat.afterUpdates == updates.count,
                atBat != self.atBat
            else { return [] }
            self.atBat = atBat
            return [.atBat]
        case .challenges(let challenges):
            guard challenges != self.challenges else { return [] }
            self.challenges = challenges
            return [.challenges]
        case .status(let status, let result):
            // Over by the rules already: only the source's final is news (its pitchers of record).
            if endedByRule { return confirmedFinal(status, result: result) }
            guard status != self.status || (status.phase == .final && self.result == nil && result != nil) else {
                return []
            }
            let before = self.status
            self.status = status
            var events: [GameEvent] = [.status(status)]
            // The first pitch: a game going live before any play (a game first heard of under
            // way, after a restart, is not announced).
            if status.phase == .live, before.phase == .scheduled || before.phase == .warmup,
                (engine?.state.playCount ?? 0) == 0
            {
                let state = engine?.state ?? GameState(starters: [], homeBatsFirst: homeBatsFirst)
                events.append(.moment(Moment.score(.gameStart, gameID: gameID, state: state)))
            }
            if status.phase == .final {
                self.result = result ?? self.result ?? GameResult(scheduledInnings: scheduledInnings)
                events += finish()
            }
            return events
        }
    }

    /// Applies one update; false when the engine refused it (the game then stops there).
    private mutating func apply(_ update: GameUpdate, into events: inout [GameEvent]) -> Bool {
        guard var engine else { return false }
        let before = engine
        let applied: GameEngine.Applied
        applications += 1
        do {
            applied = try engine.apply(update)
        } catch {
            // The engine may be part-way through the update: the game keeps the one before it.
            events += problem(update, "\(error)")
            return false
        }
        self.engine = engine
        updates.append(update)
        atBat = nil
        let state = engine.state
        if state.inning != before.state.inning || state.battingSide != before.state.battingSide {
            events.append(.halfInning(inning: state.inning, battingSide: state.battingSide))
            pitcherLines.startHalfInning()
        }
        var pitches: UInt8?
        if case .play(let record) = update {
            linescore.begin(inning: state.inning, side: state.battingSide)
            pitches = record.pitches
            if record.placedRunner != nil { battingLines.placeRunner(side: record.battingSide) }
        }
        switch applied {
        case .play(let result):
            linescore.add(result.runs, inning: result.inning, side: result.battingSide)
            pitcherLines.record(result, pitches: pitches)
            battingLines.record(result) { state.fielder($0, of: result.pitchingSide) }
            tally.record(result, runsAfter: state.score[result.battingSide])
            // The half-inning of the play, even when its third out ended it.
            lastPlayAgainst[result.pitchingSide] = result
            var entry = PlayByPlayEntry(
                number: state.playCount, inning: result.inning, half: Words.half(result.battingSide),
                text: PlayDescription.text(result, name: info.name(of:)),
                outs: min(3, result.outsBefore + result.outs), awayScore: state.score.away,
                homeScore: state.score.home, scoring: result.runs > 0)
            if entry.outs < 3 {
                entry.bases =
                    (state.runners.first.isNone ? 0 : 1) | (state.runners.second.isNone ? 0 : 2)
                    | (state.runners.third.isNone ? 0 : 4)
            }
            playByPlay.append(entry)
            events.append(.play(result, number: state.playCount))
        case .substitution(let appearance):
            if appearance.position == Position.pitcher { pitcherLines.enter(appearance.player, side: appearance.side) }
            battingLines.enter(
                appearance, inning: state.inning,
                designatedHitterSlot: Int(before.state.lineup(appearance.side).designatedHitterSlot))
            playByPlay.append(
                PlayByPlayEntry(
                    number: state.playCount, inning: state.inning, half: Words.half(state.battingSide),
                    text: PlayDescription.entering(
                        info.name(of: appearance.player), team: info.team(appearance.side).nickname,
                        position: appearance.position),
                    outs: state.outs, awayScore: state.score.away, homeScore: state.score.home, scoring: false))
            events.append(.substitution(appearance))
        case .placeholder:
            pitcherLines.placeholder(pitcher: state.pitcher, side: state.fieldingSide, pitches: pitches)
        }
        if state.score != before.state.score {
            events.append(.score(state.score))
            // A side takes a lead it did not have, in the 7th inning or later.
            let leader = (state.score.away - state.score.home).signum()
            if state.inning >= 7, leader != 0, leader != (before.state.score.away - before.state.score.home).signum() {
                let half = Words.half(state.battingSide)
                events.append(
                    .moment(
                        Moment.score(
                            .leadChange, gameID: gameID,
                            detail: "\(state.inning)-\(half)-\(state.score.away)-\(state.score.home)", state: state)))
            }
        }
        events += Self.moments(
            gameID: gameID, from: before.tracker, to: engine.tracker, after: state, everyOut: context.everyOut,
            cannotCount: cannotCount)
        // The last out (or a walk-off) ends the game by the rules: it is final now, its bids settled
        // with this play, not minutes later when the source says so.
        if case .play = update, !isFinal, state.isOver(scheduledInnings: scheduledInnings, homeBatsFirst: homeBatsFirst)
        {
            endedByRule = true
            status = GameStatus(.final)
            result = result ?? GameResult(scheduledInnings: scheduledInnings)
            events.append(.status(status))
            events += finish()
            events = Self.endedWithTheGame(events)
        }
        return true
    }

    /// The source's word after the rules ended the game: a final status, with the pitchers of
    /// record where it gives them, is a new final line; anything else (a feed that still says the
    /// game is on) is not news.
    private mutating func confirmedFinal(_ status: GameStatus, result: GameResult?) -> [GameEvent] {
        guard status.phase == .final, let engine else { return [] }
        var changed = false
        if status != self.status {
            self.status = status
            changed = true
        }
        if let result, result != self.result {
            self.result = result
            changed = true
        }
        guard changed, let result = self.result else { return [] }
        return [.status(status), .final(line(engine.state, result: result))]
    }

    private mutating func enterStarters() {
        battingLines.start(starters)
        for starter in starters where starter.position == Position.pitcher {
            pitcherLines.enter(starter.player, side: starter.side)
        }
    }

    private mutating func problem(_ update: GameUpdate?, _ reason: String) -> [GameEvent] {
        let text = update.map { "update \(updates.count + 1) (\(Self.describe($0))): \(reason)" } ?? reason
        problem = text
        return [.problem(text)]
    }

    /// Settles both bids at the end of the game and gives its line.
    private mutating func finish() -> [GameEvent] {
        guard var engine, !engine.isFinished, let result else { return [] }
        let before = engine.tracker
        engine.finish(scheduledInnings: result.scheduledInnings)
        self.engine = engine
        return Self.moments(
            gameID: gameID, from: before, to: engine.tracker, after: engine.state, everyOut: context.everyOut,
            cannotCount: cannotCount) + [
                .moment(Moment.score(.finalScore, gameID: gameID, state: engine.state)),
                .final(line(engine.state, result: result)),
            ]
    }

    private func line(_ state: GameState, result: GameResult) -> FinalLine {
        FinalLine(
            runs: state.score, hits: PerSide(away: state.pitching(.home).hits, home: state.pitching(.away).hits),
            errors: PerSide(away: state.pitching(.away).errors, home: state.pitching(.home).errors),
            innings: state.inning, result: result, linescore: linescore)
    }

    /// Follows the game again from `starters` through `list` (a re-scoring, or new lineups): the
    /// moments are the difference between the bids before and after — a revived bid, a bid now
    /// broken up — and a game already over is settled again.
    private mutating func revise(starters: [Appearance], homeBatsFirst: Bool, updates list: [GameUpdate]) -> [GameEvent]
    {
        guard let old = engine else { return [] }
        atBat = nil
        let oldUpdates = updates
        self.starters = starters
        self.homeBatsFirst = homeBatsFirst
        engine = GameEngine(starters: starters, homeBatsFirst: homeBatsFirst)
        updates = []
        linescore = RunsByInning()
        pitcherLines = PitcherLines()
        battingLines = BattingLines()
        tally = GameTally()
        playByPlay = []
        lastPlayAgainst = PerSide(away: nil, home: nil)
        enterStarters()
        problem = nil
        let wasFinal = isFinal
        var ignored: [GameEvent] = []
        var events: [GameEvent] = []
        for update in list {
            guard apply(update, into: &ignored) else {
                events += ignored.filter { if case .problem = $0 { return true } else { return false } }
                break
            }
        }
        if old.isFinished, let result, var engine {
            engine.finish(scheduledInnings: result.scheduledInnings)
            self.engine = engine
        }
        guard let new = engine else { return events }
        let from =
            zip(oldUpdates, updates).enumerated().first { $0.element.0 != $0.element.1 }?.offset
            ?? min(oldUpdates.count, updates.count)
        var revision: [GameEvent] = [
            .revision(
                Revision(
                    from: from, updatesBefore: oldUpdates.count, updatesAfter: updates.count,
                    scoreBefore: old.state.score, scoreAfter: new.state.score, bidsBefore: old.tracker.bids,
                    bidsAfter: new.tracker.bids))
        ]
        if new.state.score != old.state.score { revision.append(.score(new.state.score)) }
        // The revised plays end the game by the rules: it is final now (its bids' moments are the
        // difference below; its final score and line are said here).
        if !wasFinal, endedByRule, let result {
            events += [
                .status(status), .moment(Moment.score(.finalScore, gameID: gameID, state: new.state)),
                .final(line(new.state, result: result)),
            ]
        }
        return Self.endedWithTheGame(
            revision
                + Self.moments(
                    gameID: gameID, from: old.tracker, to: new.tracker, after: new.state, everyOut: context.everyOut,
                    cannotCount: cannotCount)
                + events)
    }

    /// `events` without the hitless inning of a bid that ends with the same play: the play that
    /// ends its game is its end ("No-hitter!"), not one more inning with odds of finishing what
    /// has just finished.
    static func endedWithTheGame(_ events: [GameEvent]) -> [GameEvent] {
        let ends = events.compactMap { event -> Moment? in
            guard case .moment(let moment) = event, [.completed, .endedNotOfficial].contains(moment.kind) else {
                return nil
            }
            return moment
        }
        guard !ends.isEmpty else { return events }
        return events.filter { event in
            guard case .moment(let moment) = event, moment.kind == .hitlessInnings else { return true }
            return !ends.contains { $0.pitchingSide == moment.pitchingSide && $0.outs == moment.outs }
        }
    }

    /// The moments between two snapshots of both bids.
    static func moments(
        gameID: String, from before: BidTracker, to after: BidTracker, after state: GameState, everyOut: Bool,
        cannotCount: UnofficialReason?
    ) -> [GameEvent] {
        guard before != after else { return [] }
        var context = MomentContext(gameID: gameID, after: state, everyOut: everyOut)
        context.cannotCount = cannotCount
        return Side.allCases.flatMap { side in
            before[side] == after[side]
                ? [] : MomentDetector.moments(from: before[side], to: after[side], in: context).map(GameEvent.moment)
        }
    }

    static func describe(_ update: GameUpdate) -> String {
        switch update {
        case .play(let record):
            "inning \(record.inning) \(Words.half(record.battingSide)), batter \(record.batter)"
        case .substitution(let appearance): "\(appearance.player) entering"
        case .lineupChange(let change): "\(change.player) entering"
        }
    }
}

extension GameFollower {
    /// Every moment of both no-hit bids of a whole game from its lineups and updates, finished
    /// when `result` is given: how tests and reports derive a game's bid moments in one call
    /// (score alerts are left out).
    package static func moments(
        gameID: String, starters: [Appearance], homeBatsFirst: Bool = false, updates: [GameUpdate],
        result: GameResult?
    ) -> (follower: GameFollower, moments: [Moment]) {
        var follower = GameFollower(gameID: gameID)
        var events = follower.follow(.lineups(starters, homeBatsFirst: homeBatsFirst))
        events += follower.follow(.updates(updates))
        if let result { events += follower.follow(.status(GameStatus(.final), result: result)) }
        return (
            follower,
            events.compactMap {
                if case .moment(let moment) = $0, moment.kind.isBid { return moment }
                return nil
            }
        )
    }
}
