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
    package static func feed(_ game: ReplayGame, at now: Date, people: People) -> GameFeed {
        let shown = game.updates.prefix { $0.time <= now }
        let code = statusCode(game, shown: shown.count, at: now)
        var builder = Builder(game: game, people: people)
        for (time, update) in shown { builder.add(update, at: time) }
        let lastTime = shown.last?.time ?? min(now, game.start)
        return GameFeed(
            gamePk: gamePk(game),
            metaData: MetaData(wait: 10, timeStamp: timeStamp(lastTime), gameEvents: [], logicalEvents: []),
            gameData: gameData(game, status: status(code), people: people),
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
    package static func statusCode(_ game: ReplayGame, shown: Int, at now: Date) -> String {
        if shown == game.updates.count { return "F" }
        if shown > 0 { return "I" }
        return now >= game.start.addingTimeInterval(-20 * 60) ? "PW" : "S"
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
            // The fielders credited: who first played the ball, and each error, on the first
            // movement written.
            var credits: [PlayRecord.Runner.Credit] = []
            if play.fieldedBy > 0 {
                credits.append(.init(position: FieldPosition(code: "\(play.fieldedBy)"), credit: "f_fielded_ball"))
            }
            for error in 0..<min(play.errors.count, 4) {
                credits.append(
                    .init(position: FieldPosition(code: "\(play.errors[error])"), credit: "f_fielding_error"))
            }
            // Each batter or runner the play mentions, from where he stood.
            var outNumber = before.outs
            for base in 0...3 {
                let runner = base == 0 ? record.batter : result.runnersBefore[base]
                guard !runner.isNone else { continue }
                let out = play.putOuts[base]
                let destination = play.advances[base]
                guard out || destination != .none else { continue }
                if base > 0 && !out && destination == .base(base) { continue }
                if out { outNumber += 1 }
                plays[plays.count - 1].runners.append(
                    .init(
                        movement: .init(
                            originBase: baseName(base), start: baseName(base),
                            end: out ? nil : (destination.scored ? "score" : destination.base.map { "\($0)B" }),
                            outBase: out ? "\(min(4, base + 1))B" : nil, isOut: out, outNumber: out ? outNumber : nil),
                        details: .init(
                            event: name,
                            // Each runner's steal is his own event (a double steal, K+SB2).
                            eventType: base > 0 && play.stolenBases[base]
                                ? "stolen_base_" + ["", "2b", "3b", "home"][min(base, 3)] : name,
                            movementReason: nil,
                            runner: Person(id: people.id(runner), fullName: nil), responsiblePitcher: nil,
                            isScoringEvent: destination.scored, rbi: nil,
                            earned: destination.scored ? destination != .homeUnearned : nil, playIndex: index),
                        credits: credits))
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

        mutating func appendEvent(_ event: PlayEvent) {
            plays[plays.count - 1].playEvents.append(.value(event))
        }

        mutating func addSubstitution(_ appearance: Appearance, at time: Date) {
            let side = appearance.side
            let slot = Int(appearance.battingSlot)
            let replaced: PlayerID =
                appearance.position == Position.pitcher
                ? state.fielder(1, of: side)
                : (slot > 0 ? state.lineup(side).entries[slot].player : .none)
            let alreadyIn =
                state.battingSlot(of: appearance.player, side: side) != nil
                || state.fielder(1, of: side) == appearance.player
            let type: String
            if appearance.position == Position.pitcher && !alreadyIn {
                type = "pitching_substitution"
            } else if appearance.position >= Position.pinchHitter {
                type = "offensive_substitution"
            } else if alreadyIn {
                type = "defensive_switch"
            } else {
                type = "defensive_substitution"
            }
            var order: String?
            if slot > 0 {
                if alreadyIn {
                    order = players[side]![people.id(appearance.player)]?.battingOrder
                } else {
                    let count = (subsInSlot[side]![slot] ?? 0) + 1
                    subsInSlot[side]![slot] = count
                    order = "\(slot)\(String(format: "%02d", count))"
                }
            }
            let id = people.id(appearance.player)
            let position = FieldPosition(code: "\(appearance.position)", name: nil, abbreviation: nil)
            var entry =
                players[side]![id]
                ?? Boxscore.Player(
                    person: Person(id: id, fullName: game.info.players["\(appearance.player)"]), position: position,
                    allPositions: [], battingOrder: order)
            entry.position = position
            entry.allPositions = (entry.allPositions ?? []) + [position]
            if entry.battingOrder == nil { entry.battingOrder = order }
            players[side]![id] = entry
            let event = PlayEvent(
                index: 0, type: "action", isPitch: false, isSubstitution: true,
                details: .init(description: nil, event: type, eventType: type),
                count: state.count.map { .init(balls: Int($0.balls), strikes: Int($0.strikes), outs: state.outs) },
                player: Person(id: id, fullName: nil), position: position,
                replacedPlayer: replaced.isNone ? nil : Person(id: people.id(replaced), fullName: nil),
                battingOrder: order, pitchData: nil, endTime: isoMilliseconds(time))
            _ = try? state.apply(.substitution(appearance))
            if open {
                var event = event
                event.index = nextIndex
                appendEvent(event)
            } else {
                pending.append(event)
            }
        }

        func linescore(scheduledInnings: Int) -> Linescore {
            Linescore(
                currentInning: state.inning, inningState: nil,
                inningHalf: state.battingSide == .home ? "Bottom" : "Top", isTopInning: state.battingSide == .away,
                scheduledInnings: scheduledInnings,
                teams: .init(
                    home: .init(runs: state.score.home, hits: state.pitching(.away).hits, errors: nil, leftOnBase: nil),
                    away: .init(runs: state.score.away, hits: state.pitching(.home).hits, errors: nil, leftOnBase: nil)),
                outs: state.outs, balls: nil, strikes: nil)
        }

        func boxscore() -> Boxscore {
            func box(_ side: Side) -> Boxscore.TeamBox {
                var players: [String: Boxscore.Player] = [:]
                for (id, player) in self.players[side]! { players["ID\(id)"] = player }
                return Boxscore.TeamBox(
                    team: team(side == .away ? game.info.away : game.info.home),
                    pitchers: state.pitching(side).pitchers.map(people.id), battingOrder: nil, players: players)
            }
            return Boxscore(teams: .init(away: box(.away), home: box(.home)))
        }
    }
}
