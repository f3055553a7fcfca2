/// What a promotion can be triggered by, counted per batting side as a game goes: stolen bases,
/// strikeouts and home runs, with the first play of each, and every scoring play with the runs
/// after it (so "the play that did it" can be named for any run threshold). Pure; kept by the
/// game follower beside the line score.
package struct GameTally: Sendable, Hashable, Codable {
    /// A counted kind of play, named by the side that bats.
    package enum Event: String, Sendable, Hashable, Codable, CaseIterable {
        case stolenBase = "stolen_base"
        /// A strikeout of one of the side's batters (a strikeout by the other side's pitchers).
        case strikeout = "strikeout"
        case homeRun = "home_run"
    }

    /// One play worth naming: when it happened and who did it.
    package struct Mark: Sendable, Hashable, Codable {
        package var inning: Int
        package var battingSide: Side
        /// The batter, or the runner who stole.
        package var player: PlayerID
        package var eventType: EventType
        /// The batting side's runs after the play.
        package var runsAfter: Int

        package init(inning: Int, battingSide: Side, player: PlayerID, eventType: EventType, runsAfter: Int) {
            self.inning = inning
            self.battingSide = battingSide
            self.player = player
            self.eventType = eventType
            self.runsAfter = runsAfter
        }
    }

    /// Counts by batting side.
    package var stolenBases = PerSide(repeating: 0)
    package var strikeouts = PerSide(repeating: 0)
    package var homeRuns = PerSide(repeating: 0)
    /// Every counted play of each batting side, in order.
    package var marks: PerSide<[Mark]> = PerSide(repeating: [])
    /// Every scoring play, in order.
    package var scoring: [Mark] = []

    package init() {}

    package func count(_ event: Event, batting side: Side) -> Int {
        switch event {
        case .stolenBase: stolenBases[side]
        case .strikeout: strikeouts[side]
        case .homeRun: homeRuns[side]
        }
    }

    /// The play at which `side`'s batters reached `count` of `event` (1-based), if they did.
    package func play(_ event: Event, batting side: Side, reaching count: Int) -> Mark? {
        guard count >= 1 else { return nil }
        var seen = 0
        for mark in marks[side] where Self.event(of: mark) == event {
            seen += 1
            if seen == count { return mark }
        }
        return nil
    }

    /// The scoring play after which `side` had `runs` runs or more for the first time.
    package func play(batting side: Side, reachingRuns runs: Int) -> Mark? {
        scoring.first { $0.battingSide == side && $0.runsAfter >= runs }
    }

    /// A stolen base's mark is written with the event type `.stolenBase` whatever the play was
    /// (a steal on a strikeout, a wild pitch ...).
    private static func event(of mark: Mark) -> Event {
        switch mark.eventType {
        case .homeRun: .homeRun
        case .strikeout: .strikeout
        default: .stolenBase
        }
    }

    /// Counts what `result` did; `runsAfter` is the batting side's score after it.
    package mutating func record(_ result: PlayResult, runsAfter: Int) {
        let side = result.battingSide
        let play = result.play
        if play.eventType == .strikeout {
            strikeouts[side] += 1
            marks[side].append(
                Mark(
                    inning: result.inning, battingSide: side, player: result.responsibleBatter,
                    eventType: .strikeout, runsAfter: runsAfter))
        }
        if play.eventType == .homeRun {
            homeRuns[side] += 1
            marks[side].append(
                Mark(
                    inning: result.inning, battingSide: side, player: result.batter, eventType: .homeRun,
                    runsAfter: runsAfter))
        }
        if !play.stolenBases.isEmpty {
            for base in 1...3 where play.stolenBases[base] {
                stolenBases[side] += 1
                marks[side].append(
                    Mark(
                        inning: result.inning, battingSide: side, player: result.runnersBefore[base],
                        eventType: .stolenBase, runsAfter: runsAfter))
            }
        }
        if play.runs > 0 {
            scoring.append(
                Mark(
                    inning: result.inning, battingSide: side, player: result.batter, eventType: play.eventType,
                    runsAfter: runsAfter))
        }
    }
}
