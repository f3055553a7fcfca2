import Alerts
import Baseball
import Foundation
import Retrosheet
import TestSupport
import Testing

/// The scoreboard's final line of every game of the 2020 season (which the repository ships),
/// followed as the server follows a game: the score and hits per side of the ground truth, a line
/// score that adds up, and pitchers of record who pitched for the side the result gives them.
@Suite(.heavy) struct FinalLineTests {
    struct Ending: Sendable {
        var gameID: String
        var line: FinalLine?
        var problem: String?
        var pitched: PerSide<[PlayerID]>
        var homeBatsFirst: Bool
    }

    static func endings(of file: String) -> [Ending] {
        guard let reader = try? EventFileReader(path: file) else { return [] }
        return reader.games().map { result in
            guard case .success(let record) = result else {
                return Ending(gameID: file, problem: "unreadable", pitched: .init(repeating: []), homeBatsFirst: false)
            }
            var follower = GameFollower(gameID: record.id)
            var events = follower.follow(.lineups(record.startingAppearances, homeBatsFirst: record.homeBatsFirst))
            do {
                events += follower.follow(.updates(try record.updates()))
            } catch {
                return Ending(
                    gameID: record.id, problem: "\(error)", pitched: .init(repeating: []), homeBatsFirst: false)
            }
            events += follower.follow(.status(GameStatus(.final), result: record.result))
            // The last line said: the rules end a game with its last out, and its source then gives the
            // pitchers of record.
            let line = events.lazy.compactMap { if case .final(let line) = $0 { line } else { nil } }.last
            let pitched = PerSide(
                away: follower.state?.pitching(.away).pitchers ?? [],
                home: follower.state?.pitching(.home).pitchers ?? [])
            return Ending(
                gameID: record.id, line: line, problem: follower.problem, pitched: pitched,
                homeBatsFirst: record.homeBatsFirst)
        }
    }

    @Test func everyGameOf2020EndsWithItsScoreHitsLineAndPitchersOfRecord() async throws {
        // The ground truth has a row per defence: its hits allowed are the other side's hits.
        var truth: [String: (runs: PerSide<Int>, hits: PerSide<Int>)] = [:]
        for row in try TestData.table("groundtruth/sides_2020.csv") {
            let id = row["game_id"]!
            var entry =
                truth[id] ?? (
                    PerSide(away: Int(row["final_away"]!)!, home: Int(row["final_home"]!)!), .init(repeating: -1)
                )
            let hits = Int(row["hits_allowed"]!)!
            if row["defense_is_home"] == "1" { entry.hits.away = hits } else { entry.hits.home = hits }
            truth[id] = entry
        }
        let files = try EventFiles.expand([TestData.path("retrosheet/2020")])
        let endings = await EventFiles.map(files, Self.endings).flatMap { $0 }
        #expect(endings.count == truth.count)
        #expect(endings.count == 898)
        var differences: [String] = []
        var decisions = (wins: 0, saves: 0)
        var shortened: [String] = []
        for ending in endings {
            guard let line = ending.line, ending.problem == nil else {
                differences.append("\(ending.gameID): no final line (\(ending.problem ?? "?"))")
                continue
            }
            guard let expected = truth[ending.gameID] else {
                differences.append("\(ending.gameID): not in the ground truth")
                continue
            }
            if line.runs != expected.runs {
                differences.append("\(ending.gameID) runs \(line.runs) ≠ \(expected.runs)")
            }
            if line.hits != expected.hits {
                differences.append("\(ending.gameID) hits \(line.hits) ≠ \(expected.hits)")
            }
            for side in Side.allCases where line.linescore.total(side) != line.runs[side] {
                differences.append(
                    "\(ending.gameID) line \(line.linescore) adds up to \(line.linescore.total(side)) for \(side)")
            }
            if line.linescore.innings != line.innings {
                differences.append(
                    "\(ending.gameID) line has \(line.linescore.innings) innings, the game \(line.innings)")
            }
            // A bottom half not batted: the home side was already ahead, or the game was called
            // short of its length (WAS202007230, the rain-shortened 2020 opener, ends after the top
            // of the 6th).
            if !ending.homeBatsFirst, line.linescore.home.count < line.linescore.away.count,
                line.runs.home <= line.runs.away, line.innings >= line.result.scheduledInnings
            {
                differences.append("\(ending.gameID) home did not bat in the last inning but did not win")
            }
            if line.innings < line.result.scheduledInnings { shortened.append(ending.gameID) }
            // The pitchers of record pitched for the side the result gives them.
            guard line.runs.home != line.runs.away else { continue }
            let winner: Side = line.runs.home > line.runs.away ? .home : .away
            let result = line.result
            if let pitcher = result.winningPitcher {
                decisions.wins += 1
                if !ending.pitched[winner].contains(pitcher) {
                    differences.append("\(ending.gameID) winning pitcher \(pitcher) did not pitch for \(winner)")
                }
            }
            if let pitcher = result.losingPitcher, !ending.pitched[winner.opponent].contains(pitcher) {
                differences.append("\(ending.gameID) losing pitcher \(pitcher) did not pitch for \(winner.opponent)")
            }
            if let pitcher = result.savePitcher {
                decisions.saves += 1
                if !ending.pitched[winner].contains(pitcher) || pitcher == result.winningPitcher {
                    differences.append("\(ending.gameID) save \(pitcher) did not pitch in relief for \(winner)")
                }
            }
        }
        #expect(differences.isEmpty, "\(differences.count) differences: \(differences.prefix(12))")
        // Every game of 2020 has its winning pitcher in the files; saves in some.
        #expect(decisions.wins == 898)
        #expect(decisions.saves > 300)
        #expect(shortened.contains("WAS202007230"))
    }

    /// What differs between each pitcher's line and what the game's records say: earned runs
    /// against the file's `data,er` records; hits, runs, outs and walks summed by side against
    /// the side's totals; the pitchers in order of entry.
    static func pitcherLineDifferences(of file: String) -> [String] {
        guard let reader = try? EventFileReader(path: file) else { return ["\(file): unreadable"] }
        var differences: [String] = []
        for case .success(let record) in reader.games() {
            var follower = GameFollower(gameID: record.id)
            _ = follower.follow(.lineups(record.startingAppearances, homeBatsFirst: record.homeBatsFirst))
            guard let updates = try? record.updates() else {
                differences.append("\(record.id): updates unreadable")
                continue
            }
            _ = follower.follow(.updates(updates))
            guard let state = follower.state else { continue }
            let lines = follower.pitcherLines
            var earned: [String: Int] = [:]
            for fields in record.data where fields.count == 3 && fields[0] == "er" {
                earned[fields[1]] = Int(fields[2])
            }
            // Every pitcher the records give earned runs for has them; a pitcher without a record
            // entered and left without facing a batter (CHN202008020: Burdi, replaced after a
            // rain delay).
            var wrong: [String] = []
            for line in lines.lines {
                let id = "\(line.pitcher)"
                if let expected = earned[id] {
                    if line.earnedRuns != expected { wrong.append("\(id) \(line.earnedRuns) ≠ \(expected)") }
                } else if line.battersFaced > 0 || line.outs > 0 || line.earnedRuns > 0 {
                    wrong.append("\(id) has no data,er record but faced \(line.battersFaced)")
                }
            }
            if Set(earned.keys) != Set(lines.lines.map { "\($0.pitcher)" }).intersection(earned.keys) {
                wrong.append(
                    "records for pitchers who did not pitch: \(Set(earned.keys).subtracting(lines.lines.map { "\($0.pitcher)" }))"
                )
            }
            if !wrong.isEmpty { differences.append("\(record.id) earned runs: \(wrong.sorted())") }
            for side in Side.allCases {
                let team = state.pitching(side)
                let mine = lines.lines(of: side)
                if mine.map(\.pitcher) != team.pitchers {
                    differences.append("\(record.id) \(side) pitchers \(mine.map(\.pitcher)) ≠ \(team.pitchers)")
                }
                let sums = (
                    mine.reduce(0) { $0 + $1.hits }, mine.reduce(0) { $0 + $1.runs }, mine.reduce(0) { $0 + $1.outs },
                    mine.reduce(0) { $0 + $1.walks }, mine.reduce(0) { $0 + $1.battersFaced }
                )
                if sums != (team.hits, team.runs, team.outs, team.walks, team.battersFaced) {
                    differences.append(
                        "\(record.id) \(side): lines add up to H R outs BB BF \(sums), the side \((team.hits, team.runs, team.outs, team.walks, team.battersFaced))"
                    )
                }
                if mine.contains(where: { $0.pitches == nil }) {
                    differences.append(
                        "\(record.id) \(side): a pitcher without pitches in a season scored pitch by pitch")
                }
            }
        }
        return differences
    }

    @Test func everyPitcherLineOf2020AddsUpAndHasTheFilesEarnedRuns() async throws {
        let files = try EventFiles.expand([TestData.path("retrosheet/2020")])
        let differences = await EventFiles.map(files, Self.pitcherLineDifferences).flatMap { $0 }
        #expect(differences.isEmpty, "\(differences.count) differences: \(differences.prefix(12))")
    }

    /// Lucas Giolito's no-hitter (2020-08-25, CHA202008250): 9 innings, no hit, no run, one
    /// walk, 13 strikeouts, 101 pitches — the line MLB's box score gives.
    @Test func giolitosNoHitterLine() throws {
        let reader = try EventFileReader(path: TestData.path("retrosheet/2020/2020CHA.EVA"))
        let record = try #require(
            reader.games().lazy.compactMap { try? $0.get() }.first { $0.id == "CHA202008250" })
        var follower = GameFollower(gameID: record.id)
        _ = follower.follow(.lineups(record.startingAppearances, homeBatsFirst: record.homeBatsFirst))
        _ = follower.follow(.updates(try record.updates()))
        let lines = follower.pitcherLines.lines(of: .home)
        #expect(lines.count == 1)
        let line = try #require(lines.first)
        #expect("\(line.pitcher)" == "gioll001")
        #expect(line.inningsPitched == "9.0")
        #expect((line.hits, line.runs, line.earnedRuns, line.walks, line.strikeouts) == (0, 0, 0, 1, 13))
        #expect(line.pitches == 101)
        #expect(line.battersFaced == 28)
    }

    /// The score alerts of every 2020 game, followed as the server follows one (scheduled, live,
    /// its plays, final): one first pitch, one final score that is the game's, and a lead change
    /// wherever the line score shows a side taking a lead it did not have in a half-inning of
    /// the 7th or later.
    static func scoreAlertDifferences(of file: String) -> [String] {
        guard let reader = try? EventFileReader(path: file) else { return ["\(file): unreadable"] }
        var differences: [String] = []
        for case .success(let record) in reader.games() {
            guard let updates = try? record.updates() else { continue }
            var follower = GameFollower(gameID: record.id)
            var events = follower.follow(.lineups(record.startingAppearances, homeBatsFirst: record.homeBatsFirst))
            events += follower.follow(.status(GameStatus(.live), result: nil))
            events += follower.follow(.updates(updates))
            events += follower.follow(.status(GameStatus(.final), result: record.result))
            let moments = events.compactMap {
                if case .moment(let moment) = $0, moment.kind.isScore { moment } else { nil }
            }
            let starts = moments.filter { $0.kind == .gameStart }
            let finals = moments.filter { $0.kind == .finalScore }
            let leads = moments.filter { $0.kind == .leadChange }
            guard let state = follower.state else { continue }
            if starts.map(\.id) != ["\(record.id)-game-start"] {
                differences.append("\(record.id) starts \(starts.map(\.id))")
            }
            if finals.count != 1 || finals.first?.score != state.score || finals.first?.id != "\(record.id)-final-score"
            {
                differences.append("\(record.id) final \(finals.map(\.score)) ≠ \(state.score)")
            }
            if Set(moments.map(\.id)).count != moments.count { differences.append("\(record.id) repeats an id") }
            for lead in leads where lead.inning < 7 || lead.score.away == lead.score.home {
                differences.append("\(record.id) lead change \(lead.id) in the \(lead.inning)th at \(lead.score)")
            }
            // From the line score: the leader before and after each half-inning.
            let line = follower.linescore
            var score = PerSide(away: 0, home: 0)
            // (2020's games at the visitors' park: the home side batted first, and its half is
            // named by the side, as the alert's id names it.)
            for inning in 1...line.innings {
                for side in record.homeBatsFirst ? [Side.home, .away] : [Side.away, .home] {
                    let runs = side == .away ? line.away : line.home
                    guard inning <= runs.count else { continue }
                    let before = (score.away - score.home).signum()
                    score[side] += runs[inning - 1]
                    let after = (score.away - score.home).signum()
                    let half = side == .away ? "top" : "bottom"
                    let taken = leads.contains { $0.id.hasPrefix("\(record.id)-lead-change-\(inning)-\(half)-") }
                    if inning >= 7, after != 0, after != before, !taken {
                        differences.append(
                            "\(record.id): the \(half) of the \(inning)th changed the lead without an alert: \(leads.map(\.id))"
                        )
                    }
                    if taken && runs[inning - 1] == 0 {
                        differences.append("\(record.id): a lead change in a scoreless \(half) of the \(inning)th")
                    }
                }
            }
        }
        return differences
    }

    @Test func everyGameOf2020HasItsScoreAlerts() async throws {
        let files = try EventFiles.expand([TestData.path("retrosheet/2020")])
        let differences = await EventFiles.map(files, Self.scoreAlertDifferences).flatMap { $0 }
        #expect(differences.isEmpty, "\(differences.count) differences: \(differences.prefix(12))")
    }
}
