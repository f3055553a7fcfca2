import Baseball
import Foundation

/// One game of a replayed day: its updates with the (virtual) time each happens.
package struct ReplayGame: Sendable {
    package var record: GameRecord
    package var info: GameInfo
    package var start: Date
    package var end: Date
    package var updates: [(time: Date, update: GameUpdate)]
    /// Each update's pitch sequence as written (`BCFX`, `.>S.>B`), aligned with `updates`: empty
    /// for a substitution or a record without pitches.
    package var pitchSequences: [[UInt8]] = []

    /// What the game's last records say: its scheduled length and the pitchers of record.
    package var result: GameResult { record.result }
}

/// A past day's Retrosheet games as a live feed: every game starts at its real first pitch
/// (`info,starttime` in the ballpark's time zone) and its plays are spread evenly over its real
/// length (`info,timeofgame`).
package enum ReplaySchedule {
    package enum Failure: Error, CustomStringConvertible {
        case badDate(String)
        case noGames(String, [String])
        case unreadable(RetrosheetError)

        package var description: String {
            switch self {
            case .badDate(let date): "'\(date)' is not a date (YYYY-MM-DD)"
            case .noGames(let date, let places): "no Retrosheet games on \(date) in \(places.joined(separator: ", "))"
            case .unreadable(let error): "\(error)"
            }
        }
    }

    /// A day's games, and those of its games that cannot be read (each with why: its file, line
    /// and reason), which are left out as `nohit events` leaves them out.
    package struct Day: Sendable {
        package var games: [ReplayGame]
        package var skipped: [RetrosheetError]
    }

    /// The games on `date` (YYYY-MM-DD) in `data` (those that cannot be read left out: ``day(on:data:)``
    /// says which).
    package static func games(on date: String, data: [String]) throws -> [ReplayGame] {
        try day(on: date, data: data).games
    }

    /// The day `date` (YYYY-MM-DD) in `data`: a directory of season folders (`2020/`), a season
    /// folder, or event files.
    package static func day(on date: String, data: [String]) throws -> Day {
        let parts = date.split(separator: "-")
        guard parts.count == 3, parts[0].count == 4, let year = Int(parts[0]), let month = Int(parts[1]),
            let day = Int(parts[2]), (1...12).contains(month), (1...31).contains(day)
        else { throw Failure.badDate(date) }
        let retrosheetDate = String(format: "%04d/%02d/%02d", year, month, day)
        var places: [String] = []
        for path in data {
            // A directory of seasons: the year's folder or zip in it.
            var isDirectory: ObjCBool = false
            let isFolder =
                FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
            places.append((isFolder ? EventFiles.season(year, in: path) : nil) ?? path)
        }
        let files: [String]
        do {
            files = try EventFiles.expand(places)
        } catch {
            throw Failure.unreadable(error)
        }
        let teams = teamTable(near: files, year: year)
        let parks = Ballparks.near(files)
        var games: [ReplayGame] = []
        var skipped: [RetrosheetError] = []
        let idDate = String(format: "%04d%02d%02d", year, month, day)
        // A season held in two places (the bundled folder and Retrosheet's zip) is played once:
        // each game from the first place that has it.
        var seen: Set<String> = []
        for file in files {
            let reader: EventFileReader
            do {
                reader = try EventFileReader(path: file)
            } catch {
                throw Failure.unreadable(error)
            }
            for result in reader.games() {
                // A game whose records cannot be read is left out, as `nohit events` would skip
                // it, and said. One whose plays do not fit is followed up to the play that does
                // not (the engine applies each update once, when it is played).
                let record: GameRecord
                switch result {
                case .success(let read):
                    record = read
                case .failure(let error):
                    // A game of the day (its id holds its date) that cannot be read.
                    if let id = error.gameID, id.dropFirst(3).hasPrefix(idDate), !seen.contains(id) {
                        skipped.append(error)
                    }
                    continue
                }
                guard record.date == retrosheetDate, !seen.contains(record.id) else { continue }
                let updates: [GameUpdate]
                do {
                    updates = try record.updates()
                } catch {
                    skipped.append(error)
                    continue
                }
                seen.insert(record.id)
                games.append(
                    schedule(record, updates: updates, teams: teams, parks: parks, year: year, month: month, day: day))
            }
        }
        guard !games.isEmpty else { throw Failure.noGames(date, places) }
        return Day(games: games.sorted { ($0.start, $0.record.id) < ($1.start, $1.record.id) }, skipped: skipped)
    }

    /// The game `record` as a schedule gives it; `parks` (Retrosheet's park file) names its park
    /// from its `info,site` record.
    package static func schedule(
        _ record: GameRecord, updates: [GameUpdate], teams: [String: TeamRecord], parks: [String: Ballpark] = [:],
        year: Int, month: Int, day: Int
    ) -> ReplayGame {
        let date = String(format: "%04d-%02d-%02d", year, month, day)
        func team(_ code: String) -> GameInfo.Team {
            GameInfo.Team(
                club: TeamDirectory.club(
                    code, on: date, teamFile: teams[code].map { ($0.league, $0.city, $0.nickname) }))
        }
        let (away, home) = (team(record.visitingTeam ?? "?"), team(record.homeTeam ?? "?"))
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: home.club.timeZone) ?? .gmt
        let (hour, minute) = startTime(record.info("starttime"))
        let start =
            calendar.date(from: DateComponents(year: year, month: month, day: day, hour: hour, minute: minute))
            ?? Date(timeIntervalSince1970: 0)
        let minutes = Double(record.info("timeofgame").flatMap(Int.init).flatMap { $0 > 0 ? $0 : nil } ?? 180)
        let end = start.addingTimeInterval(minutes * 60)
        let step = minutes * 60 / Double(max(updates.count, 1))
        let timed = updates.enumerated().map { (start.addingTimeInterval(Double($0.offset) * step), $0.element) }
        var players: [String: String] = [:]
        for lineup in record.starters + record.substitutions {
            players["\(lineup.appearance.player)"] = record.text(lineup.name)
        }
        var info = GameInfo(id: record.id, date: date, away: away, home: home, players: players)
        info.gameType = record.gameType
        info.venue = record.info("site").flatMap { parks[$0]?.name }
        info.completedOn = record.completionDate
        if record.scheduledInnings != 9 { info.scheduledInnings = record.scheduledInnings }
        // The starting pitchers, as the schedule names its probables before the lineups are out.
        let pitchers = record.startingAppearances.filter { $0.position == Position.pitcher }
        if !pitchers.isEmpty {
            info.probablePitchers = GameInfo.ProbablePitchers(
                away: pitchers.first { $0.side == .away }.map { "\($0.player)" },
                home: pitchers.first { $0.side == .home }.map { "\($0.player)" })
        }
        var game = ReplayGame(record: record, info: info, start: start, end: end, updates: timed)
        // In the order of `GameRecord.forEachUpdate`: each play record, then its substitutions.
        var sequences: [[UInt8]] = []
        sequences.reserveCapacity(updates.count)
        for event in record.events {
            sequences.append(Array(record.text(event.pitches).utf8))
            sequences += repeatElement([], count: Int(event.substitutionCount))
        }
        game.pitchSequences = sequences.count == updates.count ? sequences : []
        return game
    }

    /// `7:10PM` → (19, 10); noon when absent or unreadable.
    static func startTime(_ text: String?) -> (Int, Int) {
        guard let text = text?.uppercased(), let colon = text.firstIndex(of: ":"),
            var hour = Int(text[..<colon]), let minute = Int(text[text.index(after: colon)...].prefix(2))
        else { return (12, 0) }
        if text.hasSuffix("PM") && hour < 12 { hour += 12 }
        if text.hasSuffix("AM") && hour == 12 { hour = 0 }
        return (hour, minute)
    }

    /// Team names from the `TEAMyyyy` file beside the event files.
    package static func teamTable(near files: [String], year: Int) -> [String: TeamRecord] {
        for directory in Set(files.map { ($0 as NSString).deletingLastPathComponent }) {
            let path = (directory as NSString).appendingPathComponent("TEAM\(year)")
            guard let bytes = try? FileBytes.read(path) else { continue }
            return Dictionary(
                TeamFile.teams(file: path, bytes: bytes).teams.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        }
        return [:]
    }
}
