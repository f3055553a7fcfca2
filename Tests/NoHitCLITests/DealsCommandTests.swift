import Foundation
import TestSupport
import Testing

/// `nohit deals` against counts made another way from the same seasons: final scores from the
/// ground truth (`groundtruth/sides_YYYY.csv`), the save and a suspended game's completion date
/// read straight from the event files' text — no engine, no follower.
@Suite(.serialized, .ownThreads) struct DealsCommandTests {
    /// The Nationals' rules that can trigger in these seasons, and when: Papa John's (v1 2012:
    /// 5+ runs; v2 from 2013: 7+ runs in a win), McDonald's (2014 only: never here), Chick-fil-A
    /// (a home save, 2015-2017).
    static func expectedDays(season: String) throws -> [String: Set<String>] {
        struct Game {
            var date: String
            var home: String
            var away: String
            var runs: (away: Int, home: Int)
        }
        var games: [String: Game] = [:]
        for row in try TestData.table("groundtruth/sides_\(season).csv") {
            let id = try #require(row["game_id"])
            games[id] = Game(
                date: try #require(row["date"]), home: try #require(row["home"]), away: try #require(row["away"]),
                runs: (Int(row["final_away"] ?? "") ?? -1, Int(row["final_home"] ?? "") ?? -1))
        }
        // The event files' own words: `info,save` of the Nationals' home games (their own file) and
        // `com,"Suspend=yyyymmdd,..."` of any game (found as bytes, then its `id` record before).
        var saves: Set<String> = []
        var completed: [String: String] = [:]
        let directory = TestData.path("retrosheet/\(season)")
        for file in try FileManager.default.contentsOfDirectory(atPath: directory)
        where file.hasSuffix(".EVN") || file.hasSuffix(".EVA") {
            let data = try Data(contentsOf: URL(fileURLWithPath: "\(directory)/\(file)"))
            func gameID(before position: Int) -> String? {
                guard let id = data.range(of: Data("\nid,".utf8), options: .backwards, in: 0..<position) else {
                    return nil
                }
                return String(decoding: data[id.upperBound..<id.upperBound + 12], as: UTF8.self)
            }
            var from = 0
            while let found = data.range(of: Data("com,\"Suspend=".utf8), in: from..<data.count) {
                let digits = String(decoding: data[found.upperBound..<found.upperBound + 8], as: UTF8.self)
                if let id = gameID(before: found.lowerBound) {
                    completed[id] =
                        "\(digits.prefix(4))-\(digits.dropFirst(4).prefix(2))-\(digits.dropFirst(6).prefix(2))"
                }
                from = found.upperBound
            }
            guard file.contains("WAS") else { continue }
            from = 0
            while let found = data.range(of: Data("\ninfo,save,".utf8), in: from..<data.count) {
                let next = data[found.upperBound]
                if next != 0x0A && next != 0x0D, let id = gameID(before: found.lowerBound + 1) { saves.insert(id) }
                from = found.upperBound
            }
        }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .gmt
        let format = DateFormatter()
        format.calendar = calendar
        format.timeZone = .gmt
        format.dateFormat = "yyyy-MM-dd"
        func nextDay(_ date: String) throws -> String {
            let day = try #require(format.date(from: date))
            return format.string(from: try #require(calendar.date(byAdding: .day, value: 1, to: day)))
        }
        let year = Int(season)!
        var days: [String: Set<String>] = [
            "papa-johns-dc-nationals": [], "mcdonalds-dc-nationals": [], "chick-fil-a-dc-nationals": [],
        ]
        for (id, game) in games where game.home == "WAS" || game.away == "WAS" {
            let isHome = game.home == "WAS"
            let runsFor = isHome ? game.runs.home : game.runs.away
            let runsAgainst = isHome ? game.runs.away : game.runs.home
            let day = try nextDay(completed[id].map { $0 == game.date ? game.date : $0 } ?? game.date)
            let papaJohns = year == 2012 ? runsFor >= 5 : runsFor >= 7 && runsFor > runsAgainst
            if papaJohns { days["papa-johns-dc-nationals"]!.insert(day) }
            if (2015...2017).contains(year), isHome, runsFor > runsAgainst, saves.contains(id) {
                days["chick-fil-a-dc-nationals"]!.insert(day)
            }
        }
        return days
    }

    /// What `nohit deals --json` lists for the season, by rule: the deal days.
    static func listedDays(season: String) async throws -> [String: Set<String>] {
        let result = try await Executable.runDetached(
            "nohit", ["deals", "--json", TestData.path("retrosheet/\(season)")])
        #expect(result.status == 0, "\(result.standardError)")
        let histories = try #require(
            try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [[String: Any]])
        var days: [String: Set<String>] = [:]
        for history in histories {
            let rule = try #require(history["rule"] as? String)
            let listed = try #require(history["days"] as? [[String: Any]])
            days[rule, default: []].formUnion(listed.compactMap { $0["date"] as? String })
            // The charts' counts are the days' counts.
            let byMonth = try #require(history["by_month"] as? [[String: Any]])
            #expect(byMonth.reduce(0) { $0 + ($1["days"] as? Int ?? 0) } == listed.count)
        }
        return days
    }

    static func compare(season: String) async throws {
        let expected = try await Executable.onThread { try expectedDays(season: season) }
        let listed = try await listedDays(season: season)
        for (rule, days) in expected.sorted(by: { $0.key < $1.key }) {
            let got = listed[rule] ?? []
            #expect(
                got == days,
                "\(rule) \(season): only listed \(got.subtracting(days).sorted()), only counted \(days.subtracting(got).sorted())"
            )
            print("deals \(season) \(rule): \(got.count) deal days listed, \(days.count) counted independently")
        }
        // No other rule of the shipped file is about the Nationals, and none triggers here.
        let others = listed.filter { expected[$0.key] == nil && !$0.value.isEmpty }
        #expect(others.isEmpty, "\(others.keys.sorted())")
    }

    @Test func nationals2020DealDaysMatchAnIndependentCount() async throws {
        try await Self.compare(season: "2020")
    }

    @Test func unknownRuleAndMalformedFileAreRefused() async throws {
        let unknown = try await Executable.runDetached(
            "nohit", ["deals", "--rule", "no-such-rule", TestData.path("retrosheet/2020")])
        #expect(unknown.status == 2)
        #expect(unknown.standardError.contains("no rule \"no-such-rule\""))
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("deals-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data(
            #"{"format":"nohit-deals/1","rules":[{"id":"pizza-hut-test","version":1,"sponsor":"X","team":{"mlb":120,"retro":"WAS"},"games":{"types":["R"],"venue":"any"},"when":{"runs_for":{">=":"seven"}},"reward":{"text":"t"},"redeem":{"kind":"next_local_day"},"time_zone":"America/New_York","effective":{"from":"2020-01-01"},"source":"s"}]}"#
                .utf8
        ).write(to: file)
        let bad = try await Executable.runDetached(
            "nohit", ["deals", "--deals", file.path, TestData.path("retrosheet/2020")])
        #expect(bad.status == 2)
        #expect(
            bad.standardError.contains("\(file.path): rule pizza-hut-test: when.runs_for >= must be a whole number"))
    }
}

extension DealsCommandTests {
    @Suite(.extended) struct Extended {
        /// One season after another (each run uses both cores).
        @Test func nationalsDealDaysMatchAnIndependentCount() async throws {
            for season in ["2012", "2015", "2019"] { try await DealsCommandTests.compare(season: season) }
        }
    }
}
