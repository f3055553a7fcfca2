import Alerts
import Baseball
import FakeStatsAPI
import Foundation
import Retrosheet
import TestSupport
import Testing

@testable import StatsAPI

/// A game read from the Stats API gives the same bids and moments as the same game read from
/// Retrosheet: each Retrosheet game is written as GUMBO (as `nohit fake-statsapi` serves it), sent
/// through JSON, read back by `GumboGame`, and replayed in the engine.
@Suite(.heavy) struct RetrosheetEquivalenceTests {
    /// A Retrosheet moment with its players named as the fake Stats API names them.
    static func translated(_ moment: Moment, people: GumboWriter.People) -> Moment {
        var moment = moment
        moment.id = people.statsAPIMomentID(moment.id)
        moment.pitchers = moment.pitchers.map(people.statsAPIPlayer)
        moment.batter = moment.batter.map(people.statsAPIPlayer)
        return moment
    }

    static func compare(_ game: ReplayGame, people: GumboWriter.People) throws -> (
        retrosheet: [Moment], statsAPI: [Moment], problems: [String]
    ) {
        let (expected, actual, problems, _) = try followers(game, people: people)
        // A completed no-hitter's last out is in words, each source's own (the fake's feed names
        // the play's kind, not always its trajectory): it is there on both, and set aside.
        for moment in expected + actual where moment.kind == .completed { #expect(moment.lastPlay != nil) }
        func wordless(_ moments: [Moment]) -> [Moment] {
            moments.map {
                var moment = $0
                moment.lastPlay = nil
                return moment
            }
        }
        return (wordless(expected), wordless(actual), problems)
    }

    /// The game followed from both sources, with the differences between what a scoreboard shows
    /// of each: the line score, runs, hits and errors, every pitcher's line, the pitchers of record.
    static func followers(_ game: ReplayGame, people: GumboWriter.People) throws -> (
        retrosheet: [Moment], statsAPI: [Moment], problems: [String], boardDifferences: [String]
    ) {
        let (retrosheet, retrosheetMoments) = GameFollower.moments(
            gameID: game.record.id, starters: game.record.startingAppearances,
            homeBatsFirst: game.record.homeBatsFirst, updates: game.updates.map(\.update), result: game.result)
        let expected = retrosheetMoments.map { translated($0, people: people) }
        let feed = GumboWriter.feed(game, at: game.end.addingTimeInterval(3600), people: people)
        let decoded = try JSONDecoder().decode(GameFeed.self, from: try JSONEncoder().encode(feed))
        let gumbo = try GumboGame(decoded)
        #expect(gumbo.gameID == game.record.id)
        let (follower, actual) = GameFollower.moments(
            gameID: gumbo.gameID, starters: gumbo.starters, updates: gumbo.updates,
            result: gumbo.isFinal ? gumbo.result : nil)
        // Each update applied once, by the follower: the translation applies none.
        #expect(follower.applications == gumbo.updates.count)
        var board: [String] = []
        func differ<Value: Equatable>(_ what: String, _ mine: Value, _ theirs: Value) {
            if mine != theirs { board.append("\(what): Retrosheet \(mine), Stats API \(theirs)") }
        }
        if let a = retrosheet.state, let b = follower.state {
            differ("runs", a.score, b.score)
            for side in Side.allCases {
                differ("\(side) hits allowed", a.pitching(side).hits, b.pitching(side).hits)
                differ("\(side) errors", a.pitching(side).errors, b.pitching(side).errors)
            }
        }
        differ("line score", retrosheet.linescore, follower.linescore)
        var lines = retrosheet.pitcherLines.lines
        for index in lines.indices { lines[index].pitcher = people.statsAPIPlayer(lines[index].pitcher) }
        for side in Side.allCases {
            let mine = lines.filter { $0.side == side }
            let theirs = follower.pitcherLines.lines(of: side)
            for (a, b) in zip(mine, theirs) where a != b {
                board.append("pitcher line: Retrosheet \(a), Stats API \(b)")
            }
            differ("\(side) pitchers", mine.map(\.pitcher), theirs.map(\.pitcher))
        }
        let decisions = { (result: GameResult?) in
            [result?.winningPitcher, result?.losingPitcher, result?.savePitcher]
        }
        differ(
            "pitchers of record", decisions(retrosheet.result).map { $0.map(people.statsAPIPlayer) },
            decisions(follower.result))
        return (expected, actual, gumbo.problems + (follower.problem.map { [$0] } ?? []), board)
    }

    @Test func everyGameOfGiolitosDayGivesTheSameMoments() throws {
        let games = try ReplaySchedule.games(on: "2020-08-25", data: [TestData.path("retrosheet")])
        #expect(games.count == 16)
        let people = GumboWriter.People(games: games)
        var total = 0
        for game in games {
            let (expected, actual, problems) = try Self.compare(game, people: people)
            #expect(problems.isEmpty, "\(game.record.id): \(problems)")
            #expect(actual == expected, "\(game.record.id)")
            total += expected.count
        }
        #expect(total == 10)
    }

    /// The scoreboard of the day is the same whether it was read from Retrosheet or from the fake
    /// Stats API serving it: the board is made from these alone (`LiveBoard.snapshot`).
    @Test func everyGameOfGiolitosDayGivesTheSameBoard() throws {
        let games = try ReplaySchedule.games(on: "2020-08-25", data: [TestData.path("retrosheet")])
        let people = GumboWriter.People(games: games)
        for game in games {
            let (_, _, problems, board) = try Self.followers(game, people: people)
            #expect(problems.isEmpty, "\(game.record.id): \(problems)")
            #expect(board.isEmpty, "\(game.record.id): \(board)")
        }
    }
}

/// The same moments and board over every game of a season, when asked (`NOHIT_EQUIVALENCE_SEASON=2020`): slow in a
/// debug build, so not part of the default run.
@Suite(.heavy) struct SeasonEquivalenceTests {
    @Test(.enabled(if: ProcessInfo.processInfo.environment["NOHIT_EQUIVALENCE_SEASON"] != nil))
    func everyGameOfTheSeasonGivesTheSameMoments() throws {
        let season = ProcessInfo.processInfo.environment["NOHIT_EQUIVALENCE_SEASON"] ?? "2020"
        let folder = TestData.path("retrosheet/\(season)")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder)
        var dates = Set<String>()
        for file in files where file.hasSuffix(".EVA") || file.hasSuffix(".EVN") {
            let text = try String(contentsOfFile: folder + "/" + file, encoding: .isoLatin1)
            for line in text.split(separator: "\n") where line.hasPrefix("info,date,") {
                dates.insert(
                    line.dropFirst(10).replacingOccurrences(of: "/", with: "-").trimmingCharacters(
                        in: .whitespacesAndNewlines))
            }
        }
        var games = 0
        var mismatched: [String] = []
        for date in dates.sorted() {
            let day = try ReplaySchedule.games(on: date, data: [TestData.path("retrosheet")])
            let people = GumboWriter.People(games: day)
            for game in day {
                games += 1
                let (expected, actual, problems, board) = try RetrosheetEquivalenceTests.followers(game, people: people)
                if actual != expected || !problems.isEmpty || !board.isEmpty {
                    let difference = zip(expected, actual).first { $0 != $1 }.map { "\($0.0) ≠ \($0.1)" } ?? ""
                    mismatched.append(
                        "\(game.record.id) \(problems.prefix(2)) \(expected.count)/\(actual.count) \(difference) \(board.prefix(2))"
                    )
                }
            }
        }
        #expect(mismatched.isEmpty, "\(mismatched.count) of \(games): \(mismatched.prefix(20))")
        print("season \(season): \(games) games, \(mismatched.count) mismatched")
    }
}

/// Read as it grows, poll after poll, a game's list of updates only ever extends: nothing seen
/// is taken back unless a play is re-scored.
@Suite(.heavy) struct ProgressiveFeedTests {
    @Test func eachSnapshotExtendsTheOneBefore() throws {
        let games = try ReplaySchedule.games(on: "2020-08-25", data: [TestData.path("retrosheet")])
        let people = GumboWriter.People(games: games)
        for game in games {
            var previous: [GameUpdate] = []
            var previousFeed: GameFeed?
            for (index, (time, _)) in game.updates.enumerated() {
                let feed = GumboWriter.feed(game, at: time, people: people)
                defer { previousFeed = feed }
                let gumbo = try GumboGame(feed)
                #expect(gumbo.problems.isEmpty, "\(game.record.id) at update \(index)")
                let extends =
                    gumbo.updates.count >= previous.count && Array(gumbo.updates.prefix(previous.count)) == previous
                #expect(extends, "\(game.record.id) at update \(index): \(gumbo.updates.count) after \(previous.count)")
                if !extends {
                    let first = zip(previous, gumbo.updates).enumerated().first { $0.element.0 != $0.element.1 }
                    func short(_ update: GameUpdate?) -> String {
                        switch update {
                        case .play(let record)?:
                            "play \(record.inning)\(record.battingSide) \(record.batter) \(record.play.map { "\($0.eventType)" } ?? "placeholder") count \(String(describing: record.count))"
                        case .substitution(let appearance)?:
                            "sub \(appearance.player) slot \(appearance.battingSlot) pos \(appearance.position)"
                        case .lineupChange(let change)?:
                            "change \(change.player) pos \(change.position) for \(String(describing: change.replacing))"
                        case nil: "none"
                        }
                    }
                    let encoder = JSONEncoder()
                    encoder.outputFormatting = [.sortedKeys]
                    func last(_ feed: GameFeed?) -> String {
                        (feed?.liveData.plays.allPlays.last).flatMap { try? encoder.encode($0) }.map {
                            String(decoding: $0, as: UTF8.self)
                        } ?? ""
                    }
                    print("BEFORE", last(previousFeed))
                    print("AFTER", last(feed))
                    Issue.record(
                        "first difference at \(first?.offset ?? -1) of \(previous.count)/\(gumbo.updates.count): \(short(first?.element.0)) → \(short(first?.element.1)); next \(short(gumbo.updates.dropFirst((first?.offset ?? 0) + 1).first))"
                    )
                    break
                }
                previous = gumbo.updates
            }
            let final = try GumboGame(GumboWriter.feed(game, at: game.end.addingTimeInterval(60), people: people))
            #expect(Array(final.updates.prefix(previous.count)) == previous, "\(game.record.id) final")
        }
    }
}
