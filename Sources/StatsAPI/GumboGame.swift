import Baseball
import Foundation

/// A live feed read as the engine reads every game: the starters, then the updates — plays (a
/// stolen base or wild pitch within a plate appearance is a play of its own, as Retrosheet writes
/// it) and substitutions — so that a game from the Stats API and the same game from Retrosheet give
/// the same bids and moments.
///
/// Only what has happened is read: completed plate appearances, and within the one in progress
/// the substitutions and base-running plays already made. Reading is a translation, not a replay:
/// no engine runs here (the game's follower applies each update, once). A substitution whose
/// batting slot the feed does not give is a `LineupChange`, which the engine places. Reading stops
/// at the first play that cannot be translated (an unknown event type, a base that is not one):
/// the updates before it stand, and `problems` says what and where. Pure.
package struct GumboGame: Sendable {
    package var gamePk: Int
    /// Retrosheet's form: home team code, official date, game number (0, or 1 and 2 in a
    /// doubleheader).
    package var gameID: String
    package var info: GameInfo
    package var starters: [Appearance]
    package var updates: [GameUpdate]
    /// The feed's own status block.
    package var feedStatus: FeedStatus
    package var scheduledInnings: Int
    /// The pitchers of record, once the game is over.
    package var decisions: LiveData.Decisions?
    /// The feed's timecode.
    package var timeStamp: String
    /// The source's own time of the game's latest play: the last completed play's `endTime`, or
    /// that of an action (a stolen base, a pickoff, a substitution) in the plate appearance under
    /// way when it is later; the feed's timecode when no play has one (where the play-to-send
    /// latency starts).
    package var playedAt: Date?
    /// The first pitch, as scheduled.
    package var start: Date?
    /// Play events that did not decode and the play that could not be read, each with its place.
    package var problems: [String]
    /// The plate appearance in progress (the play the feed has not completed): batter, count and
    /// the last pitch with its type and speed; nil between plate appearances.
    package var atBat: AtBat?
    /// The game's ABS challenges: the feed's counters and each challenged pitch; nil where the
    /// park has no ABS (an empty object) or the feed predates it.
    package var abs: ABSChallenges?
    /// Where the feed disagrees with itself without stopping the game (its ABS counters and its
    /// challenged pitches): said once, the feed's counters shown.
    package var notices: [String] = []

    /// Whether the game is over and its bids can be settled.
    package var isFinal: Bool { feedStatus.phase == .final }

    /// The status in the engine's words.
    package var status: GameStatus { feedStatus.gameStatus }

    /// What the end of the game says: its scheduled length and the pitchers of record.
    package var result: GameResult {
        func id(_ person: Person?) -> PlayerID? { person.flatMap { PlayerID(String($0.id)) } }
        return GameResult(
            scheduledInnings: scheduledInnings, winningPitcher: id(decisions?.winner),
            losingPitcher: id(decisions?.loser), savePitcher: id(decisions?.save))
    }

    /// Reads `feed`. Throws only when the game itself cannot be identified (teams, lineups).
    package init(_ feed: GameFeed) throws(StatsAPIError) {
        gamePk = feed.gamePk
        feedStatus = feed.gameData.status
        decisions = feed.liveData.decisions
        timeStamp = feed.metaData.timeStamp
        playedAt = Self.playedAt(feed)
        start = feed.gameData.datetime.dateTime.flatMap { ISO8601DateFormatter().date(from: $0) }
        scheduledInnings = feed.liveData.linescore?.scheduledInnings ?? 9
        let teams = feed.gameData.teams
        let date = feed.gameData.datetime.officialDate ?? feed.gameData.datetime.originalDate ?? ""
        guard let home = TeamDirectory.club(mlbID: teams.home.id, on: date),
            let away = TeamDirectory.club(mlbID: teams.away.id, on: date)
        else {
            throw .unexpectedShape(
                "game \(feed.gamePk): team \(teams.away.id) or \(teams.home.id) is not a major league club")
        }
        let number =
            feed.gameData.game.doubleHeader.map { $0 == "N" } ?? true ? 0 : (feed.gameData.game.gameNumber ?? 1)
        gameID = home.retrosheet + date.replacingOccurrences(of: "-", with: "") + "\(number)"
        var names: [String: String] = [:]
        for person in (feed.gameData.players ?? [:]).values {
            if let name = person.fullName { names["\(person.id)"] = name }
        }
        info = GameInfo(
            id: gameID, date: date,
            away: GameInfo.Team(club: away), home: GameInfo.Team(club: home), players: names)
        info.setProbablePitchers(
            away: feed.gameData.probablePitchers?.away, home: feed.gameData.probablePitchers?.home)
        info.gameType = feed.gameData.game.type
        info.venue = feed.gameData.venue?.name
        if scheduledInnings != 9 { info.scheduledInnings = scheduledInnings }
        problems = []
        starters = []
        updates = []
        atBat = nil
        guard let box = feed.liveData.boxscore else {
            // Before the lineups are out there is nothing to follow.
            return
        }
        starters = try Self.starters(box, gamePk: feed.gamePk)
        read(feed.liveData.plays.allPlays)
        abs = Self.challenges(feed)
        if let abs {
            notices = abs.disagreements(names: PerSide(away: away.abbreviation, home: home.abbreviation))
        }
    }

    /// See `playedAt`. A pitch in the plate appearance under way brings no update: it is not a play.
    static func playedAt(_ feed: GameFeed) -> Date? {
        let plays = feed.liveData.plays.allPlays
        let completed = plays.last { $0.about.isComplete }?.about.endTime.flatMap(date(iso:))
        let action =
            plays.last.flatMap { play in
                play.about.isComplete
                    ? nil
                    : play.playEvents.compactMap(\.value).last { $0.type != "pitch" && $0.endTime != nil }
            }?
            .endTime.flatMap(date(iso:))
        guard let latest = [completed, action].compactMap({ $0 }).max() else {
            return Self.date(timeStamp: feed.metaData.timeStamp)
        }
        return latest
    }

    /// An ISO 8601 time as the Stats API writes it, with or without fractional seconds
    /// (`2020-08-26T02:06:25.484Z`).
    static func date(iso text: String) -> Date? {
        (try? Date(text, strategy: .iso8601.year().month().day().time(includingFractionalSeconds: true)))
            ?? (try? Date(text, strategy: .iso8601))
    }

    // MARK: Lineups

    static func starters(_ box: Boxscore, gamePk: Int) throws(StatsAPIError) -> [Appearance] {
        var starters: [Appearance] = []
        for side in Side.allCases {
            let team = side == .away ? box.teams.away : box.teams.home
            let players = team.players ?? [:]
            var startingPitcher: Int?
            for player in players.values {
                guard let order = player.battingOrder, let number = Int(order), number % 100 == 0,
                    (1...9).contains(number / 100)
                else { continue }
                let position = Self.position(player.allPositions?.first?.code ?? player.position?.code)
                guard let id = PlayerID(String(player.person.id)), position > 0 else {
                    throw .unexpectedShape("game \(gamePk): starter \(player.person.id) has no position")
                }
                starters.append(
                    Appearance(player: id, side: side, battingSlot: UInt8(number / 100), position: position))
                if position == Position.pitcher { startingPitcher = player.person.id }
            }
            // With a designated hitter the starting pitcher does not bat.
            if startingPitcher == nil, let first = team.pitchers.first, let id = PlayerID(String(first)) {
                starters.append(Appearance(player: id, side: side, battingSlot: 0, position: Position.pitcher))
            }
        }
        let slots = Set(starters.filter { $0.battingSlot > 0 }.map { "\($0.side)\($0.battingSlot)" })
        guard slots.count == 18 else {
            throw .unexpectedShape("game \(gamePk): the boxscore's starting lineups fill \(slots.count) of 18 slots")
        }
        return starters.sorted { ($0.side.rawValue, $0.battingSlot) < ($1.side.rawValue, $1.battingSlot) }
    }

    /// The Stats API's position code ("1"-"9", "10" DH, "11" PH, "12" PR), as the engine numbers
    /// them (the same numbering as Retrosheet); 0 when unknown.
    static func position(_ code: String?) -> UInt8 {
        guard let code, let number = UInt8(code), (1...12).contains(number) else { return 0 }
        return number
    }

    // MARK: Plays

    /// Reads plate appearances in order.
    mutating func read(_ plays: [PlayRecord]) {
        var half: (inning: Int, battingSide: Side)?
        for record in plays.sorted(by: { $0.about.atBatIndex < $1.about.atBatIndex }) {
            for problem in record.malformedEvents {
                problems.append("play \(record.about.atBatIndex) (inning \(record.about.inning)): \(problem)")
            }
            do {
                updates += try Self.updates(of: record, after: half, scheduledInnings: scheduledInnings)
                half = (record.about.inning, record.about.halfInning == "bottom" ? .home : .away)
            } catch {
                problems.append(
                    "play \(record.about.atBatIndex) (inning \(record.about.inning) \(record.about.halfInning)): \(error)"
                )
                return
            }
            if !record.about.isComplete {
                atBat = Self.atBat(record, afterUpdates: updates.count)
                return
            }
        }
    }

    /// The plate appearance `record` is, while it is in progress: nil before its first pitch.
    static func atBat(_ record: PlayRecord, afterUpdates: Int) -> AtBat? {
        guard let batter = PlayerID(String(record.matchup.batter.id)) else { return nil }
        let pitches = record.playEvents.compactMap(\.value).filter { $0.isPitch == true }
        guard let last = pitches.last else { return nil }
        let count = last.count ?? record.count
        return AtBat(
            batter: batter, balls: count.balls, strikes: count.strikes,
            lastPitch: last.details.type?.description ?? last.details.description,
            lastPitchSpeed: last.pitchData?.startSpeed, pitches: pitches.count, afterUpdates: afterUpdates,
            marks: marks(pitches))
    }

    package enum ReadError: Error, CustomStringConvertible {
        case unknownEvent(String)
        case badBase(String)
        case badPlayer(Int)
        case badInning(Int)

        package var description: String {
            switch self {
            case .badInning(let inning): "inning \(inning) is not from 1 to 99"
            case .unknownEvent(let type): "event type '\(type)' is not one the service knows"
            case .badBase(let base): "'\(base)' is not a base"
            case .badPlayer(let id): "player id \(id) does not fit"
            }
        }
    }

    /// One plate appearance as updates: a placeholder and the substitution for each substitution
    /// event, a play for each base-running group before the end, and the plate appearance's own
    /// play once complete. `previous` is the half-inning of the plate appearance before.
    static func updates(
        of record: PlayRecord, after previous: (inning: Int, battingSide: Side)?, scheduledInnings: Int
    ) throws -> [GameUpdate] {
        let inning = record.about.inning
        // As Retrosheet's reader does: the longest game went 26 innings.
        guard (1...99).contains(inning) else { throw ReadError.badInning(inning) }
        let battingSide: Side = record.about.halfInning == "bottom" ? .home : .away
        guard let finalBatter = PlayerID(String(record.matchup.batter.id)) else {
            throw ReadError.badPlayer(record.matchup.batter.id)
        }
        let events = record.playEvents.compactMap(\.value).sorted { $0.index < $1.index }
        // A pinch hitter takes over the plate appearance: up to his entry (and for the placeholder
        // that goes with it) the batter is the man he replaced. The matchup may name either.
        let pinchHitter = events.last {
            $0.isSubstitution == true && position($0.position?.code) == Position.pinchHitter
                && ($0.player?.id == record.matchup.batter.id || $0.replacedPlayer?.id == record.matchup.batter.id)
        }
        func batter(at index: Int) -> PlayerID {
            guard let pinchHitter, let hitter = pinchHitter.player, let replaced = pinchHitter.replacedPlayer else {
                return finalBatter
            }
            return PlayerID(String(index <= pinchHitter.index ? replaced.id : hitter.id)) ?? finalBatter
        }
        // Pitches of the plate appearance up to an event (the feed marks each pitch event).
        let pitchIndices = events.filter { $0.isPitch == true }.map(\.index)
        let marksPitches = events.contains { $0.isPitch != nil }
        func pitches(through index: Int) -> UInt8? {
            marksPitches ? UInt8(clamping: pitchIndices.count { $0 <= index }) : nil
        }
        func count(_ count: PlayRecord.Count?) -> PitchCount? {
            count.map { PitchCount(balls: UInt8(clamping: $0.balls), strikes: UInt8(clamping: $0.strikes)) }
        }

        // Runner movements by the event they belong to.
        var groups: [Int: [PlayRecord.Runner]] = [:]
        for runner in record.runners { groups[runner.details.playIndex ?? Int.max, default: []].append(runner) }
        let lastIndex = events.last?.index ?? 0
        let finalGroupIndex = record.about.isComplete ? (groups.keys.max() ?? lastIndex) : nil

        var updates: [GameUpdate] = []
        // Whether an update of this half-inning has been made yet (here or in an earlier plate
        // appearance).
        var halfStarted = previous.map { $0.inning == inning && $0.battingSide == battingSide } ?? false
        // The automatic runner of an extra inning: written as a "runner_placed" movement, put on
        // base before the next play.
        var placed: (PlayerID, Int)?
        func emit(_ update: GameUpdate) {
            updates.append(update)
            halfStarted = true
        }
        func play(_ type: String, runners: [PlayRecord.Runner], at index: Int, count eventCount: PlayRecord.Count?)
            throws
        {
            var update = PlayUpdate(
                inning: inning, battingSide: battingSide, batter: batter(at: index), count: count(eventCount),
                play: try Self.play(type, runners: runners))
            update.pitches = pitches(through: index == finalGroupIndex ? Int.max : index)
            if let runner = placed {
                update.placedRunner = runner
                placed = nil
            } else if inning > scheduledInnings, !halfStarted,
                let runner = runners.first(where: { $0.movement.originBase == "2B" }),
                let id = PlayerID(String(runner.details.runner.id))
            {
                // No placement written, but a runner starts the half on second.
                update.placedRunner = (id, 2)
            }
            emit(.play(update))
        }

        for event in events {
            if event.isSubstitution == true, let player = event.player {
                guard let id = PlayerID(String(player.id)) else { throw ReadError.badPlayer(player.id) }
                var placeholder = PlayUpdate(
                    inning: inning, battingSide: battingSide, batter: batter(at: event.index),
                    count: count(event.count), play: nil)
                placeholder.pitches = pitches(through: event.index)
                emit(.play(placeholder))
                let type = event.details.eventType ?? ""
                let fielding = battingSide.opponent
                let side: Side
                switch type {
                case "pitching_substitution", "defensive_substitution", "defensive_switch": side = fielding
                case "offensive_substitution": side = battingSide
                default:
                    // Decide by who he replaces, or by the position.
                    side = position(event.position?.code) >= Position.pinchHitter ? battingSide : fielding
                }
                let code = position(event.position?.code)
                if let order = event.battingOrder, let number = Int(order), (1...9).contains(number / 100) {
                    emit(
                        .substitution(
                            Appearance(player: id, side: side, battingSlot: UInt8(number / 100), position: code)))
                } else {
                    // The engine finds his slot in the lineup as it stands.
                    let replaced = event.replacedPlayer.flatMap { PlayerID(String($0.id)) }
                    emit(.lineupChange(LineupChange(player: id, side: side, position: code, replacing: replaced)))
                }
                continue
            }
            guard let runners = groups[event.index], event.index != finalGroupIndex else { continue }
            let type = runners.first?.details.eventType ?? event.details.eventType ?? ""
            if type == "runner_placed" {
                guard let runner = runners.first, let id = PlayerID(String(runner.details.runner.id)) else { continue }
                placed = (id, try base(runner.movement.end))
                continue
            }
            try play(type, runners: runners, at: event.index, count: event.count)
        }
        if let finalGroupIndex {
            guard let type = record.result.eventType else { throw ReadError.unknownEvent("(none)") }
            try play(type, runners: groups[finalGroupIndex] ?? [], at: finalGroupIndex, count: record.count)
        }
        return updates
    }

    /// A play from an event type and the runners' movements on it.
    static func play(_ type: String, runners: [PlayRecord.Runner]) throws -> Play {
        guard let eventType = eventType(type) else { throw ReadError.unknownEvent(type) }
        var play = Play(eventType: eventType)
        // Several movements of one runner on one play chain: the first start, the last end.
        var byRunner: [Int: (start: Int, end: Destination, out: Bool)] = [:]
        var order: [Int] = []
        for runner in runners {
            let id = runner.details.runner.id
            let start = try base(runner.movement.start)
            // Where the runner stood as the play began (a runner's movements chain).
            let origin = byRunner[id]?.start ?? start
            // Errors charged on the play (each on the movement it let happen), and the fielder who
            // first played the ball.
            for credit in runner.credits ?? [] {
                guard let code = credit.position?.code.flatMap({ UInt8($0) }), (1...9).contains(code) else { continue }
                if credit.credit.hasSuffix("_error") {
                    play.errors.append(code)
                    play.advanceErrors[origin] = AdvanceError(
                        fielder: code, throwing: credit.credit == "f_throwing_error")
                } else if play.fieldedBy == 0 && runner.movement.start == nil {
                    play.fieldedBy = code
                }
            }
            let out = runner.movement.isOut == true
            if out, let at = runner.movement.outBase {
                play.outAt[origin] = at == "score" ? 4 : UInt8(at.prefix(1)).map { min($0, 4) } ?? 0
            }
            let end: Destination
            switch runner.movement.end {
            case nil: end = .none
            // A run the scorer made unearned to the pitcher.
            case "score": end = runner.details.earned == false ? .homeUnearned : .home
            case let base?: end = .base(try Self.base(base))
            }
            // A runner credited with a steal of the base he ended on (`stolen_base_2b` to 2B,
            // `stolen_base_home` to score); others moving on the play are not.
            if !out, start > 0, let type = runner.details.eventType, type.hasPrefix("stolen_base_"),
                let stolen = runner.movement.end,
                type.dropFirst(12) == (stolen == "score" ? "home" : stolen.lowercased())
            {
                play.stolenBases.insert(.at(start))
            }
            if let known = byRunner[id] {
                byRunner[id] = (known.start, out ? .none : end, known.out || out)
            } else {
                byRunner[id] = (start, out ? .none : end, out)
                order.append(id)
            }
        }
        for id in order {
            guard let movement = byRunner[id] else { continue }
            if movement.out {
                play.putOuts.insert(.at(movement.start))
                play.advances[movement.start] = .none
            } else {
                play.advances[movement.start] = movement.end
            }
        }
        // A plate appearance that ends with the batter safe but no movement written: first base.
        if eventType.endsPlateAppearance && !play.putOuts.contains(.batter) && play.advances.batter == .none {
            switch eventType {
            case .strikeout, .genericOut: play.putOuts.insert(.batter)
            case .double: play.advances.batter = .second
            case .triple: play.advances.batter = .third
            case .homeRun: play.advances.batter = .home
            default: play.advances.batter = .first
            }
        }
        if eventType == .fieldersChoice && play.putOuts.isEmpty == false { play.fieldersChoiceOuts = play.putOuts }
        return play
    }

    /// "1B" → 1; nil (the batter) → 0.
    static func base(_ text: String?) throws -> Int {
        switch text {
        case nil: 0
        case "1B": 1
        case "2B": 2
        case "3B": 3
        case let other?: throw ReadError.badBase(other)
        }
    }

    /// The Stats API's `eventType` as the engine's (Retrosheet's) event type; nil when unknown.
    package static func eventType(_ type: String) -> EventType? {
        switch type {
        case "single": .single
        case "double": .double
        case "triple": .triple
        case "home_run": .homeRun
        case "walk": .walk
        case "intent_walk": .intentionalWalk
        case "hit_by_pitch": .hitByPitch
        case "strikeout", "strikeout_double_play", "strikeout_triple_play", "strike_out": .strikeout
        case "field_error": .error
        case "catcher_interf", "batter_interference", "fan_interference": .interference
        case "fielders_choice", "fielders_choice_out": .fieldersChoice
        case "field_out", "force_out", "grounded_into_double_play", "grounded_into_triple_play", "double_play",
            "triple_play", "sac_fly", "sac_bunt", "sac_fly_double_play", "sac_bunt_double_play", "other_out",
            "runner_double_play", "runner_triple_play":
            .genericOut
        case let stolen where stolen.hasPrefix("stolen_base"): .stolenBase
        case let caught where caught.hasPrefix("caught_stealing") || caught.hasPrefix("pickoff_caught_stealing"):
            .caughtStealing
        case let error where error.hasPrefix("pickoff_error"): .pickoffError
        case let pickoff where pickoff.hasPrefix("pickoff"): .pickoff
        case "wild_pitch": .wildPitch
        case "passed_ball": .passedBall
        case "balk": .balk
        case "defensive_indiff": .defensiveIndifference
        case "other_advance", "error": .otherAdvance
        default: nil
        }
    }
}

extension GumboGame {
    /// `yyyyMMdd_HHmmss` (UTC) as a date.
    package static func date(timeStamp: String) -> Date? {
        let digits = Array(timeStamp.utf8)
        guard digits.count == 15, digits[8] == UInt8(ascii: "_") else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for index in range {
                let digit = Int(digits[index]) - 48
                guard (0...9).contains(digit) else { return nil }
                value = value * 10 + digit
            }
            return value
        }
        guard let year = number(0..<4), let month = number(4..<6), let day = number(6..<8),
            let hour = number(9..<11), let minute = number(11..<13), let second = number(13..<15)
        else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .gmt
        let components = DateComponents(
            year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        guard components.isValidDate(in: calendar) else { return nil }
        return calendar.date(from: components)
    }
}
