import Baseball
import Foundation
import Retrosheet
import TestSupport
import Testing

/// A play in words names every error with its fielder, every run scored and every runner put out,
/// as Gameday does: checked on plays written for the purpose (on the lineups of a shipped sample
/// game) and, in the extended suite, on every play of 2020 against what `cwevent` read.
@Suite struct PlayTextTests {
    struct Case: Sendable, CustomTestStringConvertible {
        /// Plays of the visitors' first inning before the one described, in batting order.
        var before: [String] = []
        var play: String
        var says: [String]
        var testDescription: String { (before + [play]).joined(separator: " ") }
    }

    /// The visitors' lineup in the sample game, in batting order (their names here are their ids).
    static let lineup = [
        "sprig001", "guerv002", "turnj001", "varsd001", "kirka001", "cleme002", "kierk001", "kinei001", "biggc002",
    ]

    /// The text of the last play of `plays`, played in order by the sample game's visitors in the
    /// top of the 1st (the game's header and lineups, its plays replaced).
    static func text(of plays: [String]) throws -> String {
        let sample = try TestData.lines("retrosheet/samples/2024HOU_HOU202404010.EVA")
        var lines = sample.prefix { !$0.hasPrefix("play,") }.map(String.init)
        for (index, play) in plays.enumerated() {
            lines.append("play,1,0,\(lineup[index % 9]),00,,\(play)")
        }
        let games = EventFileReader(file: "synthetic", bytes: Array((lines.joined(separator: "\n") + "\n").utf8))
            .games()
        var last = ""
        _ = try GameReplay.run(try games[0].get()) { replayed in
            last = PlayDescription.text(replayed.result, name: { "\($0)" })
        }
        return last
    }

    @Test(arguments: [
        // Houston, 2020-08-25, bottom 1st: both runs scored on the pitcher's throwing error.
        Case(
            before: ["W", "S8.1-2"], play: "S1/G5S.2-H(E1/TH)(NR);1-H(NR)",
            says: [
                "turnj001 singles to pitcher.", "sprig001 scores on a throwing error by the pitcher.",
                "guerv002 scores.",
            ]),
        Case(
            before: ["S8"], play: "S9.1-3(E9)",
            says: ["guerv002 singles to right field.", "sprig001 to third on an error by the right fielder."]),
        Case(play: "E6/G6", says: ["sprig001 reaches on an error by the shortstop."]),
        Case(
            play: "E5/TH/G5.B-2",
            says: ["sprig001 reaches on a throwing error by the third baseman.", "sprig001 to second."]),
        Case(
            play: "E6/G6.B-2(E3)",
            says: ["sprig001 reaches on an error by the shortstop.", "to second on an error by the first baseman."]),
        Case(play: "C/E2", says: ["sprig001 reaches on catcher's interference."]),
        Case(play: "C/E3", says: ["sprig001 reaches on interference by the first baseman."]),
        Case(play: "FLE5", says: ["Error on a foul ball by the third baseman."]),
        Case(play: "K+WP.B-1", says: ["sprig001 strikes out but reaches on the wild pitch."]),
        Case(play: "K+E2.B-1", says: ["sprig001 strikes out but reaches on an error by the catcher."]),
        Case(
            before: ["S8"], play: "CS2(2E4)",
            says: ["sprig001 is caught stealing second, safe on an error by the second baseman."]),
        Case(before: ["S8"], play: "CS2(24)", says: ["sprig001 is caught stealing second."]),
        Case(
            before: ["S8"], play: "PO1(E1/TH).1-2",
            says: ["sprig001 is picked off first, safe on a throwing error by the pitcher, and takes second."]),
        Case(
            before: ["S8"], play: "SB2.1-3(E2/TH)",
            says: ["sprig001 steals second and takes third on a throwing error by the catcher."]),
        Case(before: ["T9"], play: "SBH", says: ["sprig001 steals home and scores."]),
        Case(
            before: ["S8"], play: "SB2.1X3(65)", says: ["sprig001 steals second and is out at third trying to advance."]
        ),
        Case(
            before: ["T9"], play: "PO3(E2/TH).3-H(NR)",
            says: ["sprig001 is picked off third, safe on a throwing error by the catcher, and scores."]),
        Case(before: ["S8"], play: "WP.1-2", says: ["Wild pitch by blanr001.", "sprig001 to second."]),
        Case(before: ["S8"], play: "BK.1-2", says: ["Balk by blanr001.", "sprig001 to second."]),
        Case(
            before: ["S8"], play: "64(1)3/GDP/G6",
            says: ["guerv002 grounds into a double play to shortstop.", "sprig001 out at second."]),
        Case(
            before: ["S8", "S8.1-2"], play: "8(B)84(2)/LDP/L8",
            says: ["turnj001 hits into a double play to center field.", "sprig001 out at second."]),
        Case(play: "S9.BX2(95)", says: ["sprig001 singles to right field and is out at second trying to advance."]),
        Case(
            before: ["D7"], play: "S8.2XH(82)",
            says: ["guerv002 singles to center field.", "sprig001 out at home."]),
        Case(before: ["T9"], play: "8/SF/F8.3-H", says: ["guerv002 hits a sacrifice fly", "sprig001 scores."]),
    ])
    func namesEveryErrorRunAndOut(_ test: Case) throws {
        let text = try Self.text(of: test.before + [test.play])
        for phrase in test.says {
            #expect(text.contains(phrase), "\(test.play): \(text)")
        }
        // An error is named once.
        let errors = text.components(separatedBy: "error").count - 1
        #expect(errors <= test.play.filter { $0 == "E" }.count, "\(test.play): \(text)")
    }
}

extension PlayTextTests {
    @Suite(.extended, .heavy) struct Extended {
        /// What a play's words must say, from `cwevent`'s row of it: each fielder charged with an
        /// error (`E` and a position in the event text), each runner who scored, each put out.
        static func missing(in text: String, row: [Substring]) -> [String] {
            // A sentence about `player` that says `words` ("sprig001 scores", "sprig001 steals home
            // and scores").
            func says(_ player: String, _ words: [String]) -> Bool {
                text.components(separatedBy: ". ").contains { sentence in
                    sentence.hasPrefix(player) && words.contains { sentence.contains($0) }
                }
            }
            func field(_ name: String) -> String {
                let value = row[CWEventCSV.columns.firstIndex(of: name)!]
                return String(value).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            }
            var missing: [String] = []
            let event = field("EVENT_TX")
            var fielders = Set<Character>()
            var previous: Character = " "
            for character in event {
                if previous == "E", ("1"..."9").contains(character) { fielders.insert(character) }
                previous = character
            }
            for fielder in fielders.sorted() {
                let position = PlayDescription.position(UInt8(String(fielder))!)!
                let named =
                    text.contains("by the \(position)")
                    || (fielder == "2" && text.contains("catcher's interference"))
                if !named { missing.append("the error by the \(position)") }
            }
            if Int(field("BAT_DEST_ID"))! >= 4 {
                let batter = field("BAT_ID")
                if !says(batter, ["scores", "homers"]) {
                    missing.append("\(batter) scoring")
                }
            }
            for base in 1...3 {
                let runner = field("BASE\(base)_RUN_ID")
                guard !runner.isEmpty else { continue }
                let destination = Int(field("RUN\(base)_DEST_ID"))!
                if destination >= 4 && !says(runner, ["scores"]) {
                    missing.append("\(runner) scoring")
                }
                if destination == 0 && !says(runner, [" out", "is caught stealing", "is picked off"]) {
                    missing.append("\(runner) out")
                }
            }
            return missing
        }

        @Test func everyPlayOf2020NamesItsErrorsRunsAndOuts() async throws {
            let oracle = try TestData.lines("oracle/cwevent-2020.csv").dropFirst()
            var rows: [String: [Substring]] = [:]
            for line in oracle {
                let fields = line.split(separator: ",", omittingEmptySubsequences: false)
                let game = fields[0].trimmingCharacters(in: CharacterSet(charactersIn: "\""))
                rows["\(game):\(fields[fields.count - 1])"] = fields
            }
            let cwevent = rows
            let (plays, errors, problems) = try await Executable.onThread { () throws -> (Int, Int, [String]) in
                var plays = 0
                var errors = 0
                var problems: [String] = []
                for file in try EventFiles.expand([TestData.path("retrosheet/2020")]) {
                    for result in try EventFileReader(path: file).games() {
                        let game = try result.get()
                        try GameReplay.run(game) { replayed in
                            plays += 1
                            guard let row = cwevent["\(game.id):\(replayed.number)"] else {
                                problems.append("\(game.id) play \(replayed.number): no cwevent row")
                                return
                            }
                            let text = PlayDescription.text(replayed.result, name: { "\($0)" })
                            if row[CWEventCSV.columns.firstIndex(of: "EVENT_TX")!].contains("E") { errors += 1 }
                            let missing = Extended.missing(in: text, row: row)
                            if !missing.isEmpty {
                                let event = row[CWEventCSV.columns.firstIndex(of: "EVENT_TX")!]
                                problems.append("\(game.id) \(event): \"\(text)\" leaves out \(missing)")
                            }
                        }
                    }
                }
                return (plays, errors, problems)
            }
            #expect(plays == 68_599)
            #expect(errors > 1_000)
            #expect(problems.isEmpty, "\(problems.count) plays: \(problems.prefix(12).joined(separator: "\n"))")
        }
    }
}
