import Baseball
import Foundation
import Retrosheet
import StatsAPI

/// Writes a Retrosheet game as the Stats API would show it at a moment of its replay: the live
/// feed (GUMBO) with the plate appearances so far, the linescore, the boxscore's lineups and
/// pitchers, and its schedule entry. Plays the engine reads as separate Retrosheet records (a
/// stolen base during a plate appearance) become events of one plate appearance, as MLB writes
/// them; `GumboGame` reads them back into the same records.
package enum GumboWriter {
    /// Stats API person ids for the Retrosheet players of a set of games: 600000 and up, in the
    /// order of their Retrosheet ids, so the same games always give the same ids.
    package struct People: Sendable {
        private var ids: [PlayerID: Int] = [:]
        private var players: [Int: PlayerID] = [:]

        package init(games: [ReplayGame]) {
            var all = Set<PlayerID>()
            for game in games {
                for lineup in game.record.starters + game.record.substitutions { all.insert(lineup.appearance.player) }
            }
            for (offset, player) in all.sorted().enumerated() {
                ids[player] = 600_000 + offset
                players[600_000 + offset] = player
            }
        }

        package func id(_ player: PlayerID) -> Int { ids[player] ?? 0 }

        package func player(_ id: Int) -> PlayerID? { players[id] }

        /// The engine's id for the player as read from this fake Stats API.
        package func statsAPIPlayer(_ player: PlayerID) -> PlayerID { PlayerID(String(id(player))) ?? .none }

        /// A Retrosheet moment id as the same moment read from this fake Stats API has it: a
        /// pitching change's id ends with the new pitcher's id.
        package func statsAPIMomentID(_ id: String) -> String {
            guard let last = id.split(separator: "-").last, let player = PlayerID(String(last)), self.id(player) != 0
            else { return id }
            return String(id.dropLast(last.count)) + "\(statsAPIPlayer(player))"
        }
    }

    /// The game's number in this fake Stats API: its date, home club and game number
    /// (`CHA202008250` → 202008251450).
    package static func gamePk(_ game: ReplayGame) -> Int {
        let id = game.record.id
        let club = game.info.home.club.mlbID ?? 0
        let date = Int(id.dropFirst(3).prefix(8)) ?? 0
        let number = Int(id.suffix(1)) ?? 0
        return (date * 1000 + club) * 10 + number
    }

    /// The Stats API's name for an engine event type.
    static func eventTypeName(_ type: EventType, play: Play, base: Int) -> String {
        let bases = ["", "2b", "3b", "home"]
        switch type {
        case .single: return "single"
        case .double: return "double"
        case .triple: return "triple"
        case .homeRun: return "home_run"
        case .walk: return "walk"
        case .intentionalWalk: return "intent_walk"
        case .hitByPitch: return "hit_by_pitch"
        case .strikeout: return "strikeout"
        case .error: return "field_error"
        case .interference: return "catcher_interf"
        case .fieldersChoice: return "fielders_choice"
        case .genericOut: return play.outs >= 2 ? "double_play" : "field_out"
        case .stolenBase: return "stolen_base_" + bases[min(3, max(1, base))]
        case .caughtStealing: return "caught_stealing_" + bases[min(3, max(1, base))]
        case .pickoff: return "pickoff_\(max(1, min(3, base)))b"
        case .pickoffError: return "pickoff_error_\(max(1, min(3, base)))b"
        case .wildPitch: return "wild_pitch"
        case .passedBall: return "passed_ball"
        case .balk: return "balk"
        case .defensiveIndifference: return "defensive_indiff"
        case .foulError: return "foul_error"
        case .otherAdvance, .none, .unknown, .missingPlay: return "other_advance"
        }
    }

    static func baseName(_ base: Int) -> String? { base == 0 ? nil : "\(base)B" }

    /// `2020-08-26T00:10:00Z` and `20200826_001000`, in UTC.
    static func iso(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: date)
    }

    /// A play's time as MLB writes it, to the millisecond (`2020-08-26T02:06:25.484Z`).
    package static func isoMilliseconds(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }

    package static func timeStamp(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = .gmt
        formatter.dateFormat = "yyyyMMdd_HHmmss"
        return formatter.string(from: date)
    }

    // MARK: The live feed

    /// The feed as of `now`: every update at or before it. Before the first pitch the game is
    /// scheduled (warming up in its last 20 minutes); after the last update it is final.
    /// With `abs`, the game's synthetic ABS challenges thrown by `now` are on their pitches and in
    /// the counters (`SyntheticABS`).
    package static func feed(
        _ game: ReplayGame, at now: Date, people: People, abs: SyntheticABS.Plan? = nil
    ) -> GameFeed {
        let shown = game.updates.prefix { $0.time <= now }
        let pitches = pitchesShown(game, at: now)
        let code = statusCode(game, shown: shown.count, pitched: !pitches.isEmpty, at: now)
        var builder = Builder(game: game, people: people)
        // Where each play's plate appearance is in allPlays.
        var recordOf: [Int: Int] = [:]
        for (order, (time, update)) in shown.enumerated() {
            builder.add(update, at: time)
            if case .play = update, !builder.plays.isEmpty { recordOf[order] = builder.plays.count - 1 }
        }
        var lastTime = shown.last?.time ?? min(now, game.start)
        // The plate appearance under way, pitch by pitch, as MLB's feed shows it (the play in
        // progress last in allPlays, its pitches with the count after each).
        if !pitches.isEmpty, case .play(let record) = game.updates[shown.count].update {
            for pitch in pitches {
                builder.addPitch(pitch, of: record)
                lastTime = max(lastTime, pitch.time)
            }
            recordOf[shown.count] = builder.plays.count - 1
        }
        var data = gameData(game, status: status(code), people: people)
        if let abs {
            data.absChallenges = challenges(
                abs, of: game, at: now, in: &builder.plays, recordOf: recordOf, people: people)
        }
        return GameFeed(
            gamePk: gamePk(game),
            metaData: MetaData(wait: 10, timeStamp: timeStamp(lastTime), gameEvents: [], logicalEvents: []),
            gameData: data,
            liveData: LiveData(
                plays: Plays(allPlays: builder.plays, currentPlay: builder.plays.last),
                linescore: builder.linescore(scheduledInnings: game.record.scheduledInnings),
                boxscore: builder.boxscore(), decisions: code == "F" ? decisions(game, people: people) : nil))
    }

    /// The pitchers of record of a final game, from the event file's `info` records.
    static func decisions(_ game: ReplayGame, people: People) -> LiveData.Decisions? {
        func person(_ player: PlayerID?) -> Person? {
            player.map { Person(id: people.id($0), fullName: game.info.players["\($0)"]) }
        }
        let result = game.result
        guard result.winningPitcher != nil || result.losingPitcher != nil else { return nil }
        return .init(
            winner: person(result.winningPitcher), loser: person(result.losingPitcher),
            save: person(result.savePitcher))
    }

    /// `codedGameState` with `shown` of the game's updates out at `now`: final once all are out,
    /// in progress once one is, warming up in the 20 minutes before the first pitch.
    package static func statusCode(_ game: ReplayGame, shown: Int, pitched: Bool, at now: Date) -> String {
        if shown == game.updates.count { return "F" }
        if shown > 0 || pitched { return "I" }
        return now >= game.start.addingTimeInterval(-20 * 60) ? "PW" : "S"
    }

    /// The pitches of the plate appearance under way at `now` (thrown before its play; none once the
    /// game is over): what the feed shows of the play in progress.
    package static func pitchesShown(_ game: ReplayGame, at now: Date) -> [ReplayGame.TimedPitch] {
        let shown = game.updates.prefix { $0.time <= now }.count
        guard shown < game.updates.count, case .play = game.updates[shown].update else { return [] }
        return game.timedPitches().filter { $0.update == shown && !$0.afterPlay && $0.time <= now }
    }

    static func status(_ code: String) -> FeedStatus {
        let (abstract, detailed): (String, String) =
            switch code {
            case "F": ("Final", "Final")
            case "I": ("Live", "In Progress")
            case "PW": ("Preview", "Warmup")
            default: ("Preview", "Scheduled")
            }
        return FeedStatus(
            abstractGameState: abstract, codedGameState: code, detailedState: detailed, statusCode: code, reason: nil,
            startTimeTBD: false)
    }

    static func team(_ team: GameInfo.Team) -> Team {
        Team(
            id: team.club.mlbID ?? 0, name: team.name, abbreviation: team.abbreviation, teamName: team.nickname,
            locationName: team.club.location)
    }

    static func gameData(_ game: ReplayGame, status: FeedStatus, people: People) -> GameData {
        let number = Int(game.record.id.suffix(1)) ?? 0
        var players: [String: Person] = [:]
        for (id, name) in game.info.players {
            guard let player = PlayerID(id) else { continue }
            let person = people.id(player)
            players["ID\(person)"] = Person(id: person, fullName: name)
        }
        return GameData(
            game: .init(
                pk: gamePk(game), type: "R", doubleHeader: number == 0 ? "N" : "Y", gameNumber: max(1, number),
                season: String(game.info.date.prefix(4))),
            datetime: .init(dateTime: iso(game.start), originalDate: game.info.date, officialDate: game.info.date),
            status: status,
            teams: .init(away: team(game.info.away), home: team(game.info.home)),
            probablePitchers: nil, flags: nil, players: players)
    }

    /// The schedule entry of the game as of `now`.
    package static func scheduleGame(_ game: ReplayGame, at now: Date, people: People) -> ScheduleGame {
        let feed = feed(game, at: now, people: people)
        let line = feed.liveData.linescore
        return ScheduleGame(
            gamePk: feed.gamePk, gameGuid: nil, gameType: "R", season: feed.gameData.game.season,
            gameDate: iso(game.start), officialDate: game.info.date, status: feed.gameData.status,
            teams: .init(
                away: .init(
                    team: team(game.info.away), score: line?.teams?.away.runs, isWinner: nil, probablePitcher: nil),
                home: .init(
                    team: team(game.info.home), score: line?.teams?.home.runs, isWinner: nil, probablePitcher: nil)),
            doubleHeader: feed.gameData.game.doubleHeader, gameNumber: feed.gameData.game.gameNumber,
            rescheduleDate: nil, rescheduleGameDate: nil, rescheduledFrom: nil, rescheduledFromDate: nil,
            resumeDate: nil, resumedFrom: nil, linescore: line, flags: nil, broadcasts: [])
    }

    /// Builds plate appearances from the engine's records, keeping a game state to know who is
    /// on each base and in each slot.
    struct Builder {
        let game: ReplayGame
        let people: People
        var state: GameState
        var plays: [PlayRecord] = []
        /// Events waiting for the next plate appearance (substitutions between half-innings).
        var pending: [PlayEvent] = []
        var open = false
        /// Pitch events written in the plate appearance open now.
        var pitchesWritten = 0
        var subsInSlot: [Side: [Int: Int]] = [.away: [:], .home: [:]]
        var players: [Side: [Int: Boxscore.Player]] = [.away: [:], .home: [:]]

        init(game: ReplayGame, people: People) {
            self.game = game
            self.people = people
            state = GameState(starters: game.record.startingAppearances, homeBatsFirst: game.record.homeBatsFirst)
            for starter in game.record.startingAppearances {
                let id = people.id(starter.player)
                let position = FieldPosition(code: "\(starter.position)", name: nil, abbreviation: nil)
                players[starter.side]![id] = Boxscore.Player(
                    person: Person(id: id, fullName: game.info.players["\(starter.player)"]),
                    position: position, allPositions: [position],
                    battingOrder: starter.battingSlot == 0 ? nil : "\(starter.battingSlot)00")
            }
        }

        var nextIndex: Int { (plays.last?.playEvents.count ?? 0) }

        mutating func openPlate(_ record: PlayUpdate) {
            if open, let last = plays.last, last.about.inning == record.inning,
                (last.about.halfInning == "bottom") == (record.battingSide == .home)
            {
                return
            }
            let person = Person(id: people.id(record.batter), fullName: game.info.players["\(record.batter)"])
            plays.append(
                PlayRecord(
                    result: .init(
                        type: "atBat", event: nil, eventType: nil, description: nil, rbi: nil, awayScore: nil,
                        homeScore: nil, isOut: nil),
                    about: .init(
                        atBatIndex: plays.count, halfInning: record.battingSide == .home ? "bottom" : "top",
                        isTopInning: record.battingSide == .away, inning: record.inning, startTime: nil, endTime: nil,
                        isComplete: false, isScoringPlay: nil, hasReview: nil, hasOut: nil),
                    count: .init(balls: 0, strikes: 0, outs: 0),
                    matchup: .init(batter: person, pitcher: person, batSide: nil, pitchHand: nil),
                    runners: [], playEvents: [], atBatIndex: plays.count))
            open = true
            pitchesWritten = 0
            for var event in pending {
                event.index = plays[plays.count - 1].playEvents.count
                plays[plays.count - 1].playEvents.append(.value(event))
            }
            pending = []
        }

        mutating func add(_ update: GameUpdate, at time: Date) {
            switch update {
            case .play(let record):
                if record.play == nil {
                    openPlate(record)
                    writePitches(record.pitches, beforeAPitchThatEnds: false)
                    _ = try? state.apply(update)
                    return
                }
                addPlay(record, at: time)
            case .substitution(let appearance):
                addSubstitution(appearance, at: time)
            case .lineupChange(let change):
                // Retrosheet's records always give the slot; a change is placed as the engine would.
                addSubstitution(state.appearance(for: change), at: time)
            }
        }

        mutating func addPlay(_ record: PlayUpdate, at time: Date) {
            guard let play = record.play else { return }
            let wasOpenSameHalf =
                open
                && plays.last.map {
                    $0.about.inning == record.inning
                        && ($0.about.halfInning == "bottom") == (record.battingSide == .home)
                } ?? false
            if !wasOpenSameHalf { openPlate(record) }
            let before = state
            // The extra inning's automatic runner, before the play.
            if let placed = record.placedRunner {
                let index = nextIndex
                appendEvent(
                    PlayEvent(
                        index: index, type: "action", isPitch: false, isSubstitution: nil,
                        details: .init(
                            description: "runner placed", event: "Runner Placed On Base",
                            eventType: "runner_placed"),
                        count: nil, player: Person(id: people.id(placed.runner), fullName: nil), position: nil,
                        replacedPlayer: nil, battingOrder: nil, pitchData: nil))
                plays[plays.count - 1].runners.append(
                    .init(
                        movement: .init(
                            originBase: nil, start: nil, end: "\(placed.base)B", outBase: nil, isOut: false,
                            outNumber: nil),
                        details: .init(
                            event: "Runner Placed On Base", eventType: "runner_placed",
                            movementReason: nil, runner: Person(id: people.id(placed.runner), fullName: nil),
                            responsiblePitcher: nil, isScoringEvent: false, rbi: false, earned: false,
                            playIndex: index)))
            }
            guard let result = try? state.apply(.play(record)) else { return }
            writePitches(record.pitches, beforeAPitchThatEnds: play.eventType.endsPlateAppearance)
            let index = nextIndex
            // The base the lead runner went for (2-4), for names like stolen_base_3b.
            let target =
                (1...3).reversed().compactMap { base -> Int? in
                    guard !result.runnersBefore[base].isNone else { return nil }
                    if play.putOuts[base] { return base + 1 }
                    return play.advances[base] == .none ? nil : (play.advances[base].base ?? 4)
                }.first ?? 2
            let name = eventTypeName(play.eventType, play: play, base: target - 1)
            let endsPlate = play.eventType.endsPlateAppearance
            // The last pitch, unless the plate appearance ended without one (an automatic
            // intentional walk).
            let pitched = endsPlate && (record.pitches.map { Int($0) > pitchesWritten } ?? true)
            appendEvent(
                PlayEvent(
                    index: index, type: pitched ? "pitch" : "action", isPitch: pitched, isSubstitution: nil,
                    details: .init(
                        description: nil, event: name, eventType: endsPlate ? nil : name,
                        isInPlay: endsPlate ? true : nil),
                    count: record.count.map {
                        .init(balls: Int($0.balls), strikes: Int($0.strikes), outs: before.outs)
                    },
                    player: nil, position: nil, replacedPlayer: nil, battingOrder: nil, pitchData: nil,
                    endTime: isoMilliseconds(time)))
            if pitched { pitchesWritten += 1 }
            // The fielders credited: who first played the ball (on the first movement written),
            // each error on the movement it let happen (the one the play is named for on the
            // batter's), and an error no movement was tied to on the first movement too.
            var credits: [PlayRecord.Runner.Credit] = []
            if play.fieldedBy > 0 {
                credits.append(.init(position: FieldPosition(code: "\(play.fieldedBy)"), credit: "f_fielded_ball"))
            }
            var errorsOn = play.advanceErrors
            var untied = (0..<min(play.errors.count, 4)).map { play.errors[$0] }
            if [.error, .foulError, .interference].contains(play.eventType), let first = untied.first,
                errorsOn.batter.isNone
            {
                errorsOn.batter = AdvanceError(fielder: first, throwing: play.modifiers.contains(.throwingError))
            }
            // Each batter or runner the play mentions, from where he stood (one who stayed is not).
            func written(_ base: Int) -> Bool {
                let runner = base == 0 ? record.batter : result.runnersBefore[base]
                let destination = play.advances[base]
                return !runner.isNone && (play.putOuts[base] || destination != .none)
                    && !(base > 0 && !play.putOuts[base] && destination == .base(base))
            }
            for base in 0...3 where !errorsOn[base].isNone {
                guard written(base) else {
                    errorsOn[base] = .none
                    continue
                }
                if let index = untied.firstIndex(of: errorsOn[base].fielder) { untied.remove(at: index) }
            }
            func errorCredit(_ error: AdvanceError) -> PlayRecord.Runner.Credit {
                .init(
                    position: FieldPosition(code: "\(error.fielder)"),
                    credit: error.throwing ? "f_throwing_error" : "f_fielding_error")
            }
            credits += untied.map { errorCredit(AdvanceError(fielder: $0)) }
            var outNumber = before.outs
            for base in 0...3 where written(base) {
                let runner = base == 0 ? record.batter : result.runnersBefore[base]
                let out = play.putOuts[base]
                let destination = play.advances[base]
                if out { outNumber += 1 }
                plays[plays.count - 1].runners.append(
                    .init(
                        movement: .init(
                            originBase: baseName(base), start: baseName(base),
                            end: out ? nil : (destination.scored ? "score" : destination.base.map { "\($0)B" }),
                            outBase: out && play.outAt[base] > 0 ? "\(play.outAt[base])B" : nil, isOut: out,
                            outNumber: out ? outNumber : nil),
                        details: .init(
                            event: name,
                            // Each runner's steal is his own event (a double steal, K+SB2).
                            eventType: base > 0 && play.stolenBases[base]
                                ? "stolen_base_" + ["", "2b", "3b", "home"][min(base, 3)] : name,
                            movementReason: nil,
                            runner: Person(id: people.id(runner), fullName: nil), responsiblePitcher: nil,
                            isScoringEvent: destination.scored, rbi: nil,
                            earned: destination.scored ? destination != .homeUnearned : nil, playIndex: index),
                        credits: credits + (errorsOn[base].isNone ? [] : [errorCredit(errorsOn[base])])))
                credits = []
            }
            let last = plays.count - 1
            plays[last].about.endTime = isoMilliseconds(time)
            plays[last].count = .init(
                balls: Int(record.count?.balls ?? 0), strikes: Int(record.count?.strikes ?? 0), outs: state.outs)
            plays[last].matchup.pitcher = Person(id: people.id(result.pitcher), fullName: nil)
            plays[last].matchup.batter = Person(
                id: people.id(record.batter), fullName: game.info.players["\(record.batter)"])
            if endsPlate || state.outs >= 3 {
                plays[last].result.eventType = name
                plays[last].result.event = name
                plays[last].result.awayScore = state.score.away
                plays[last].result.homeScore = state.score.home
                plays[last].result.isOut = play.outs > 0
                plays[last].about.isComplete = true
                open = false
            }
        }

        /// Writes the pitches of a record (its sequence counts the plate appearance's pitches so
        /// far) not yet written, less the play's own when it is a pitch that ends the plate
        /// appearance.
        mutating func writePitches(_ pitches: UInt8?, beforeAPitchThatEnds ends: Bool) {
            guard let pitches else { return }
            while pitchesWritten < Int(pitches) - (ends ? 1 : 0) {
                appendEvent(
                    PlayEvent(
                        index: nextIndex, type: "pitch", isPitch: true, isSubstitution: nil,
                        details: .init(description: nil, event: nil, eventType: nil), count: nil, player: nil,
                        position: nil, replacedPlayer: nil, battingOrder: nil, pitchData: nil))
                pitchesWritten += 1
            }
        }

        /// A pitch of the plate appearance under way (before its play): its call and the count
        /// after it (Retrosheet's records have no pitch types or speeds).
        mutating func addPitch(_ pitch: ReplayGame.TimedPitch, of record: PlayUpdate) {
            openPlate(record)
            let strike = pitch.atBat.strikes > 0 && pitch.atBat.lastPitch?.lowercased().contains("ball") == false
            // A half just begun: its outs are none yet, its pitcher the other side's.
            let outs = state.outs >= 3 ? 0 : state.outs
            appendEvent(
                PlayEvent(
                    index: nextIndex, type: "pitch", isPitch: true, isSubstitution: nil,
                    details: .init(
                        description: pitch.atBat.lastPitch, code: String(UnicodeScalar(pitch.code)),
                        isStrike: strike, isBall: !strike),
                    count: .init(balls: pitch.atBat.balls, strikes: pitch.atBat.strikes, outs: outs),
                    player: nil, position: nil, replacedPlayer: nil, battingOrder: nil, pitchData: nil))
            pitchesWritten += 1
            plays[plays.count - 1].count = .init(balls: pitch.atBat.balls, strikes: pitch.atBat.strikes, outs: outs)
            plays[plays.count - 1].matchup.batter = Person(
                id: people.id(record.batter), fullName: game.info.players["\(record.batter)"])
            plays[plays.count - 1].matchup.pitcher = Person(
                id: people.id(state.fielder(1, of: record.battingSide.opponent)), fullName: nil)
        }

        mutating func appendEvent(_ event: PlayEvent) {
            plays[plays.count - 1].playEvents.append(.value(event))
        }
    }
}
