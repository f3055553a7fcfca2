import Foundation
import Retrosheet
import TestSupport
import Testing

/// `nohit box` as a user runs it, and against Chadwick's `cwbox`.
@Suite(.ownThreads) struct BoxCommandTests {
    /// Runs `nohit box --json paths...` and returns its games by id.
    static func games(_ paths: [String]) throws -> [String: [String: Any]] {
        let result = try Executable.run("nohit", ["box", "--json"] + paths)
        #expect(result.status == 0, "\(result.standardError.prefix(2000))")
        let games = try #require(
            try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [[String: Any]])
        return Dictionary(games.map { ($0["game_id"] as? String ?? "", $0) }, uniquingKeysWith: { a, _ in a })
    }

    /// Lucas Giolito's no-hitter (2020-08-25), as MLB's box score gives it.
    @Test func giolitosNoHitter() throws {
        let games = try Self.games([TestData.path("retrosheet/2020/2020CHA.EVA")])
        let game = try #require(games["CHA202008250"])
        let box = try #require(game["box"] as? [String: Any])
        let home = try #require(box["home"] as? [String: Any])
        let away = try #require(box["away"] as? [String: Any])
        #expect(home["abbreviation"] as? String == "CWS")
        let pitchers = try #require(home["pitchers"] as? [[String: Any]])
        #expect(pitchers.count == 1)
        #expect(pitchers.first?["strikeouts"] as? Int == 13)
        #expect(pitchers.first?["innings_pitched"] as? String == "9.0")
        let pittsburgh = try #require(away["batters"] as? [[String: Any]])
        #expect(pittsburgh.reduce(0) { $0 + ($1["hits"] as? Int ?? 0) } == 0)
        #expect((away["totals"] as? [String: Any])?["at_bats"] as? Int == 27)
        // Erik González's walk in the 4th: the one runner Pittsburgh had, left on base.
        #expect(away["left_on_base"] as? Int == 1)
        let chicago = try #require(home["batters"] as? [[String: Any]])
        #expect((home["totals"] as? [String: Any])?["runs"] as? Int == 4)
        #expect((home["totals"] as? [String: Any])?["hits"] as? Int == 9)
        #expect(home["left_on_base"] as? Int == 8)
        #expect(home["with_runners_in_scoring_position"] as? String == "3-for-11")
        // Every batter in the order with the slot he batted in.
        #expect(Set(chicago.map { $0["slot"] as? Int ?? 0 }) == Set(1...9))
        #expect((game["linescore"] as? [String: Any])?["away"] as? [String] == Array(repeating: "0", count: 9))
    }

    @Test func textShowsBothTeamsAndTheNotes() throws {
        let result = try Executable.run("nohit", ["box", TestData.path("retrosheet/2020/2020CHA.EVA")])
        #expect(result.status == 0)
        #expect(result.standardOutput.contains("CHA202008250  2020-08-25  Pittsburgh Pirates 0, Chicago White Sox 4"))
        #expect(result.standardOutput.contains("LOB: "))
        #expect(result.standardOutput.contains("Lucas Giolito"))
    }

    @Test func aMissingFileIsNamed() throws {
        let result = try Executable.run("nohit", ["box", "/nonexistent/2020XXX.EVA"])
        #expect(result.status == 2)
        #expect(result.standardError.contains("/nonexistent/2020XXX.EVA"))
    }
}

extension BoxCommandTests {
    /// Chadwick's `cwbox` over the 2020 season (`oracle/cwbox-2020.xml.gz`): every player's
    /// batting and pitching line and errors, each side's runners left on base, at bats and hits
    /// with runners in scoring position, and the line score.
    @Suite(.extended) struct Extended {
        @Test func everyLineOf2020EqualsCwbox() throws {
            let oracle = try CwboxOracle(TestData.bytes("oracle/cwbox-2020.xml.gz"))
            let games = try BoxCommandTests.games([TestData.path("retrosheet/2020")])
            #expect(oracle.games.count == 898)
            #expect(Set(games.keys) == Set(oracle.games.keys))
            var differences: [String] = []
            for (id, expected) in oracle.games.sorted(by: { $0.key < $1.key }) {
                guard let game = games[id] else { continue }
                differences += Self.differences(id: id, game: game, expected: expected)
            }
            #expect(differences.isEmpty, "\(differences.count) differences: \(differences.prefix(20))")
        }

        /// Every pitcher's W-L and ERA as of each Monday of 2020 (and the season's end), from the
        /// season's sides, against the sums of cwbox's lines and decisions of the games before.
        @Test func pitcherRecordsAsOfADayEqualCwboxSums() async throws {
            let oracle = try CwboxOracle(TestData.bytes("oracle/cwbox-2020.xml.gz"))
            let (sides, _) = await SeasonBids.summaries(of: try EventFiles.expand([TestData.path("retrosheet/2020")]))
            var differences: [String] = []
            var compared = 0
            for day in ["2020-07-27", "2020-08-03", "2020-08-17", "2020-08-25", "2020-09-14", "2020-09-28"] {
                var expected: [String: (wins: Int, losses: Int, outs: Int, earnedRuns: Int)] = [:]
                // (Two 2020 games were suspended and completed days later: counted on the day they
                // ended, as standings count them.)
                let completed = ["TOR202008150": "2020-08-16", "WAS202008090": "2020-08-14"]
                for (id, game) in oracle.games where (completed[id] ?? game.date) < day {
                    for pitcher in game.pitchers {
                        var record = expected[pitcher.id] ?? (0, 0, 0, 0)
                        record.outs += pitcher.outs
                        record.earnedRuns += pitcher.earnedRuns
                        if pitcher.decision == "W" { record.wins += 1 }
                        if pitcher.decision == "L" { record.losses += 1 }
                        expected[pitcher.id] = record
                    }
                }
                let records = SeasonBids.pitcherRecords(sides, before: day)
                for (id, record) in expected where record.outs > 0 || record.wins + record.losses > 0 {
                    compared += 1
                    let mine = records[id].map { ($0.wins, $0.losses, $0.outs, $0.earnedRuns) }
                    if mine.map({ $0 != (record.wins, record.losses, record.outs, record.earnedRuns) }) ?? true {
                        differences.append("\(day) \(id): \(String(describing: mine)) ≠ \(record)")
                    }
                }
            }
            #expect(compared > 2000)
            #expect(differences.isEmpty, "\(differences.count) differences: \(differences.prefix(10))")
            // Lucas Giolito before his no-hitter, and after it.
            #expect(SeasonBids.pitcherRecords(sides, before: "2020-08-26")["gioll001"]?.outs ?? 0 > 27)
        }

        /// Batters by (slot, sequence) and pitchers in order, field by field.
        static func differences(id: String, game: [String: Any], expected: CwboxOracle.Game) -> [String] {
            var differences: [String] = []
            let box = game["box"] as? [String: Any] ?? [:]
            let line = game["linescore"] as? [String: Any] ?? [:]
            for (side, team) in [("away", expected.away), ("home", expected.home)] {
                let mine = box[side] as? [String: Any] ?? [:]
                if (line[side] as? [String] ?? []) != team.linescore {
                    differences.append("\(id) \(side) line score \(line[side] ?? "") ≠ \(team.linescore)")
                }
                if mine["left_on_base"] as? Int != team.leftOnBase {
                    differences.append("\(id) \(side) LOB \(mine["left_on_base"] ?? "") ≠ \(team.leftOnBase)")
                }
                let batters = (mine["batters"] as? [[String: Any]] ?? []).map { batter in
                    CwboxOracle.Line(
                        id: batter["id"] as? String ?? "",
                        values: Self.batting.map { (name, key) in "\(name)=\(batter[key] as? Int ?? -1)" }
                            + ["slot=\(batter["slot"] as? Int ?? -1)", "seq=\(batter["sequence"] as? Int ?? -1)"]
                            + ["e=\(batter["errors"] as? Int ?? -1)"])
                }
                // cwbox's errors are by position: each batter's summed.
                let expected = team.batters.map { line in
                    let slot = line.values.first { $0.hasPrefix("slot=") }?.dropFirst(5) ?? ""
                    let seq = line.values.first { $0.hasPrefix("seq=") }?.dropFirst(4) ?? ""
                    return CwboxOracle.Line(
                        id: line.id, values: line.values + ["e=\(team.errors["\(line.id)/\(slot)/\(seq)"] ?? 0)"])
                }
                differences += Self.compare(id, side, "batter", batters, expected)
                let risp = (mine["scoring_position_at_bats"] as? Int ?? -1, mine["scoring_position_hits"] as? Int ?? -1)
                if risp != team.scoringPosition {
                    differences.append(
                        "\(id) \(side) with runners in scoring position \(risp) ≠ \(team.scoringPosition)")
                }
                let pitchers = (mine["pitchers"] as? [[String: Any]] ?? []).map { pitcher in
                    CwboxOracle.Line(
                        id: pitcher["id"] as? String ?? "",
                        values: Self.pitching.map { (name, key) in "\(name)=\(pitcher[key] as? Int ?? -1)" })
                }
                differences += Self.compare(id, side, "pitcher", pitchers, team.pitchers)
            }
            return differences
        }

        static func compare(
            _ id: String, _ side: String, _ kind: String, _ mine: [CwboxOracle.Line], _ expected: [CwboxOracle.Line]
        ) -> [String] {
            if mine.map(\.id) != expected.map(\.id) {
                return ["\(id) \(side) \(kind)s \(mine.map(\.id)) ≠ \(expected.map(\.id))"]
            }
            return zip(mine, expected).compactMap { mine, expected in
                let wrong = zip(mine.values, expected.values).filter { $0 != $1 }
                return wrong.isEmpty ? nil : "\(id) \(kind) \(mine.id): \(wrong.map { "\($0) ≠ \($1)" })"
            }
        }

        /// cwbox's attribute, and the key of `nohit box --json`.
        static let batting = [
            ("ab", "at_bats"), ("r", "runs"), ("h", "hits"), ("d", "doubles"), ("t", "triples"), ("hr", "home_runs"),
            ("bi", "runs_batted_in"), ("bb", "walks"), ("ibb", "intentional_walks"), ("so", "strikeouts"),
            ("sb", "stolen_bases"), ("cs", "caught_stealing"), ("hp", "hit_by_pitch"), ("sh", "sacrifice_hits"),
            ("sf", "sacrifice_flies"), ("gdp", "grounded_into_double_plays"),
        ]
        static let pitching = [
            ("outs", "outs"), ("h", "hits"), ("r", "runs"), ("er", "earned_runs"), ("bb", "walks"),
            ("so", "strikeouts"), ("hr", "home_runs"), ("bf", "batters_faced"),
        ]
    }
}

/// The games of `cwbox -X` output: per side the line score, runners left on base, each batter
/// (slot 1-9) and each pitcher, with the attributes the test compares.
struct CwboxOracle {
    struct Line {
        var id: String
        var values: [String]
    }

    struct Team {
        var linescore: [String] = []
        var leftOnBase = -1
        /// At bats and hits with a runner on second or third.
        var scoringPosition = (atBats: -1, hits: -1)
        var batters: [Line] = []
        var pitchers: [Line] = []
        /// Errors by batter (`id/slot/seq`), summed over his positions.
        var errors: [String: Int] = [:]
    }

    struct Game {
        var away = Team()
        var home = Team()
        /// `yyyy-mm-dd`.
        var date = ""
        /// Every pitcher's outs, earned runs and decision (`W`, `L`, `S` or empty).
        var pitchers: [(id: String, outs: Int, earnedRuns: Int, decision: String)] = []
    }

    var games: [String: Game] = [:]

    init(_ bytes: [UInt8]) throws {
        let text = String(decoding: bytes, as: UTF8.self)
        var id = ""
        var game = Game()
        var side = 0  // 0 away, 1 home: cwbox writes the visitors' players and pitching first
        var players = 0
        var pitching = 0
        var player: [String: String] = [:]
        func update(_ change: (inout Team) -> Void) {
            if side == 0 { change(&game.away) } else { change(&game.home) }
        }
        for line in text.split(separator: "\n") {
            let trimmed = line.drop { $0 == " " }
            let attributes = Self.attributes(trimmed)
            if trimmed.hasPrefix("<boxscore ") {
                id = attributes["game_id"] ?? ""
                game = Game()
                game.date = (attributes["date"] ?? "").replacingOccurrences(of: "/", with: "-")
                players = 0
                pitching = 0
            } else if trimmed.hasPrefix("<inning_line_score ") {
                // A half not batted is "x" for the home side and "-1" for the visitors (whom
                // some 2020 games had bat second); a box score writes both "x".
                game.away.linescore.append(attributes["away"].map { $0 == "-1" ? "x" : $0 } ?? "")
                game.home.linescore.append(attributes["home"] ?? "")
            } else if trimmed.hasPrefix("<players ") {
                side = players
                players += 1
                update {
                    $0.leftOnBase = Int(attributes["lob"] ?? "") ?? -1
                    $0.scoringPosition = (Int(attributes["risp_ab"] ?? "") ?? -1, Int(attributes["risp_h"] ?? "") ?? -1)
                }
            } else if trimmed.hasPrefix("<player ") {
                player = attributes
            } else if trimmed.hasPrefix("<batting ") {
                guard let slot = Int(player["slot"] ?? ""), slot > 0 else { continue }
                let values =
                    BoxCommandTests.Extended.batting.map { "\($0.0)=\(attributes[$0.0] ?? "?")" }
                    + ["slot=\(slot)", "seq=\(player["seq"] ?? "?")"]
                update { $0.batters.append(Line(id: player["id"] ?? "", values: values)) }
            } else if trimmed.hasPrefix("<fielding ") {
                guard let slot = Int(player["slot"] ?? ""), slot > 0 else { continue }
                let key = "\(player["id"] ?? "")/\(slot)/\(player["seq"] ?? "")"
                update { $0.errors[key, default: 0] += Int(attributes["e"] ?? "") ?? 0 }
            } else if trimmed.hasPrefix("<pitching ") {
                side = pitching
                pitching += 1
            } else if trimmed.hasPrefix("<pitcher ") {
                let values = BoxCommandTests.Extended.pitching.map { "\($0.0)=\(attributes[$0.0] ?? "?")" }
                update { $0.pitchers.append(Line(id: attributes["id"] ?? "", values: values)) }
                game.pitchers.append(
                    (
                        attributes["id"] ?? "", Int(attributes["outs"] ?? "") ?? -1, Int(attributes["er"] ?? "") ?? -1,
                        attributes["dec"] ?? ""
                    ))
            } else if trimmed.hasPrefix("</boxscore>") {
                games[id] = game
            }
        }
    }

    /// `name="value"` pairs of one element's line.
    static func attributes(_ line: Substring) -> [String: String] {
        var result: [String: String] = [:]
        var rest = line[...]
        while let equals = rest.range(of: "=\"") {
            let name = rest[..<equals.lowerBound].split(separator: " ").last.map(String.init) ?? ""
            let valueStart = equals.upperBound
            guard let end = rest[valueStart...].firstIndex(of: "\"") else { break }
            result[name] = String(rest[valueStart..<end])
            rest = rest[rest.index(after: end)...]
        }
        return result
    }
}
