import Alerts
import Baseball
import Delivery
import Foundation
import Retrosheet
import Scores
import TestSupport
import Testing

@testable import Server

/// One vocabulary on every surface: a club is named as it was that day, by MLB's abbreviation or
/// its name, never by a Retrosheet code a fan would not know (`CHA`, `SLN`).
@Suite struct TeamVocabularyTests {
    /// The 2020 clubs whose Retrosheet code is not MLB's abbreviation (from the directory, not a
    /// list: `CHA`, `CHN`, `SLN`, `WAS`, ...).
    static let retrosheetOnly: Set<String> = {
        let clubs = TeamDirectory.clubs(on: "2020-08-25")
        let abbreviations = Set(clubs.map(\.abbreviation))
        return Set(clubs.map(\.retrosheet).filter { !abbreviations.contains($0) })
    }()

    /// The Retrosheet-only codes written as words in `text`. Identifiers are not words a fan reads:
    /// a game id such as `CHA202008250` is not a word of its own, and a board's `franchise` (what
    /// favourite teams are kept by, as ids) is left out.
    static func codes(in text: String) -> [String] {
        var found: [String] = []
        var word = ""
        let shown = text.replacing(/"franchise":"[A-Z0-9]+"/, with: "")
        for character in shown + " " {
            if character.isLetter || character.isNumber || character == "_" {
                word.append(character)
            } else {
                if retrosheetOnly.contains(word) { found.append(word) }
                word = ""
            }
        }
        return found
    }

    @Test func theCodesCheckedAreTheOnesFansDoNotKnow() {
        #expect(Self.retrosheetOnly.isSuperset(of: ["CHA", "CHN", "NYA", "NYN", "SLN", "LAN", "SFN", "SDN", "KCA"]))
        #expect(Self.retrosheetOnly.isDisjoint(with: ["CWS", "CLE", "PIT", "OAK", "ATH"]))
        #expect(Self.codes(in: "PIT 0, CHA 4 (CHA202008250)") == ["CHA"])
    }

    /// A game of a season followed to its end as the service follows it: its moments, and its
    /// board at the end.
    static func follow(_ record: GameRecord, teams: [String: TeamRecord]) throws -> (GameFollower, [Moment]) {
        let parts = (record.date ?? "").split(separator: "/").compactMap { Int($0) }
        let updates = try record.updates()
        let game = ReplaySchedule.schedule(
            record, updates: updates, teams: teams, year: parts[0], month: parts[1], day: parts[2])
        var follower = GameFollower(gameID: record.id)
        var events = follower.follow(.scheduled(game.info, start: game.start))
        events += follower.follow(.lineups(record.startingAppearances, homeBatsFirst: record.homeBatsFirst))
        events += follower.follow(.updates(updates))
        events += follower.follow(.status(GameStatus(.final), result: record.result))
        let moments = events.compactMap { event -> Moment? in
            if case .moment(let moment) = event { return moment }
            return nil
        }
        return (follower, moments)
    }

    /// Every surface's words for one game: every moment's push text (plain and jinx-safe), the
    /// stream's and the API's moment, the APNs, Live Activity, Web Push and webhook payloads, and
    /// the game's board as the API and the stream send it.
    static func surfaces(_ follower: GameFollower, _ moments: [Moment]) throws -> [(String, String)] {
        let info = follower.info
        var texts: [(String, String)] = []
        for moment in moments {
            for jinx in [false, true] {
                let message = MessageText.render(moment, game: info, jinxSafe: jinx)
                texts.append(("push \(moment.id)", "\(message.title) — \(message.body)"))
                if jinx { continue }
                let view = MomentView(moment, game: info, message: message, occurredAt: Date())
                texts.append(
                    ("moment \(moment.id)", String(decoding: try API.encoder.encode(view), as: UTF8.self)))
                for payload in [
                    try Payloads.apnsAlert(message, moment: moment, game: info),
                    try Payloads.liveActivity(message, moment: moment, game: info, at: Date()),
                    try Payloads.webPush(message, moment: moment, game: info),
                    try Payloads.webhook(message, moment: moment, game: info),
                ] {
                    texts.append(("payload \(moment.id)", String(decoding: payload, as: UTF8.self)))
                }
            }
        }
        let board = LiveBoard.snapshot(follower, at: Date())
        texts.append(("board \(info.id)", String(decoding: try API.encoder.encode(board), as: UTF8.self)))
        return texts
    }

    @Test func giolitosGameSaysCWSEverywhere() throws {
        let record = try #require(
            try EventFileReader(path: TestData.path("retrosheet/2020/2020CHA.EVA")).games()
                .lazy.compactMap { try? $0.get() }.first { $0.id == "CHA202008250" })
        let (follower, moments) = try Self.follow(record, teams: [:])
        #expect(moments.count > 8)
        let texts = try Self.surfaces(follower, moments)
        for (surface, text) in texts { #expect(Self.codes(in: text).isEmpty, "\(surface): \(text)") }
        #expect(texts.contains { $0.1.contains("PIT 0, CWS 4") })
    }

    @Test func clevelandIsTheIndiansIn2020AndTheGuardiansIn2022() async throws {
        // Brady Singer's near no-hitter at Cleveland, and the same game dated two years later.
        let cleveland = try ClevelandGame()
        defer { cleveland.remove() }

        for (year, nickname) in [("2020", "Indians"), ("2022", "Guardians")] {
            let path = cleveland.path(year)
            // Hall of Fame: the entry the API sends.
            let (sides, problems) = await SeasonBids.summaries(of: [path])
            #expect(problems.isEmpty)
            let singer = try #require(SeasonBids.hallOfFame(sides).first)
            let entry = HallOfFameEntry(rank: 1, side: singer)
            #expect(entry.battingTeam.name == "Cleveland \(nickname)", "\(year)")
            #expect(entry.pitchingTeam.name == "Kansas City Royals")
            #expect(entry.ending.contains("Austin Hedges singles"), "\(entry.ending)")
            // Scores: the board of the game.
            let record = try #require(try EventFileReader(path: path).games().first?.get())
            let (follower, _) = try Self.follow(record, teams: [:])
            let board = LiveBoard.snapshot(follower, at: Date())
            #expect(board.home.name == "Cleveland \(nickname)", "\(year)")
            #expect(board.home.nickname == nickname)
            #expect(board.home.abbreviation == "CLE")
        }
    }
}

extension TeamVocabularyTests {
    @Suite(.extended, .heavy) struct Extended {
        /// Every moment of every 2020 game, on every surface: no Retrosheet-only code.
        @Test func no2020MomentNamesAClubByARetrosheetCode() async throws {
            // Seconds of CPU: on a thread of its own, not on one of Swift's cooperative threads
            // (two on a two-core machine), which the tests beside it need.
            let (games, moments, bad) = try await Executable.onThread { () throws -> (Int, Int, [String]) in
                let files = try EventFiles.expand([TestData.path("retrosheet/2020")])
                let teams = ReplaySchedule.teamTable(near: files, year: 2020)
                var games = 0
                var moments = 0
                var bad: [String] = []
                for file in files {
                    for result in try EventFileReader(path: file).games() {
                        let record = try result.get()
                        let (follower, found) = try TeamVocabularyTests.follow(record, teams: teams)
                        games += 1
                        moments += found.count
                        for (surface, text) in try TeamVocabularyTests.surfaces(follower, found)
                        where !TeamVocabularyTests.codes(in: text).isEmpty {
                            bad.append("\(surface): \(text)")
                        }
                    }
                }
                return (games, moments, bad)
            }
            #expect(games == 898)
            #expect(moments > 1_000)
            #expect(
                bad.count == 0,
                "\(bad.count) texts name a Retrosheet code, e.g. \(bad.prefix(3).map { $0.prefix(300) })")
        }
    }
}
