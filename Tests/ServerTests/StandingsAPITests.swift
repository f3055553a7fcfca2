import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

/// `GET /api/standings?date=`: the divisions before a day's games, from the season's results and
/// the board's finished games, and nothing from the future of a replayed day.
@Suite struct StandingsAPITests {
    static func records(_ body: String) throws -> (source: String, records: [String: String], divisions: [String]) {
        let answer = try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])
        let divisions = try #require(answer["divisions"] as? [[String: Any]])
        var records: [String: String] = [:]
        for division in divisions {
            for team in division["teams"] as? [[String: Any]] ?? [] {
                let club = team["club"] as? [String: Any] ?? [:]
                records[club["abbreviation"] as? String ?? ""] = "\(team["wins"] ?? "")-\(team["losses"] ?? "")"
            }
        }
        return (answer["source"] as? String ?? "", records, divisions.map { $0["name"] as? String ?? "" })
    }

    /// Before the day's games are over: the records before 2020-08-25, whatever later day is asked.
    @Test func beforeTheDaysGamesAndNothingFromItsFuture() async throws {
        let fixture = try await APIServerTests.Fixture { _ in true }
        defer { fixture.remove() }
        try await fixture.test { client in
            for uri in ["/api/standings", "/api/standings?date=2020-08-25", "/api/standings?date=2020-09-28"] {
                try await client.execute(uri: uri, method: .get) { response in
                    #expect(response.status == .ok, "\(uri)")
                    let (source, records, divisions) = try Self.records(String(buffer: response.body))
                    #expect(source == "Retrosheet's 2020 season")
                    #expect(divisions == ["AL East", "AL Central", "AL West", "NL East", "NL Central", "NL West"])
                    #expect(records.count == 30)
                    #expect(records["CWS"] == "17-12", "\(uri)")
                    #expect(records["PIT"] == "7-17", "\(uri)")
                }
            }
            for (uri, status, words) in [
                ("/api/standings?date=2020-13-01", HTTPResponse.Status.badRequest, "2020-13-01"),
                ("/api/standings?date=1999-05-01", .notFound, "1999"),
            ] {
                try await client.execute(uri: uri, method: .get) { response in
                    #expect(response.status == status, "\(uri)")
                    #expect(String(buffer: response.body).contains(words), "\(uri)")
                }
            }
        }
    }

    /// The race for the postseason beside the standings, in 2020's format: what is left of each
    /// club's season is its games not yet over by the service's clock (none of the future counts).
    @Test func theRaceForThePostseasonAndWhatIsLeftOfTheSeason() async throws {
        let fixture = try await APIServerTests.Fixture { _ in true }
        defer { fixture.remove() }
        try await fixture.test { client in
            try await client.execute(uri: "/api/standings?date=2020-09-28", method: .get) { response in
                #expect(response.status == .ok)
                let body = try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any]
                let race = try #require(body?["wild_cards"] as? [String: Any])
                let format = try #require(race["format"] as? [String: Any])
                #expect(format["wild_cards"] as? Int == 2 && format["second_places"] as? Bool == true)
                let leagues = try #require(race["leagues"] as? [[String: Any]])
                #expect(leagues.map { $0["name"] as? String } == ["AL", "NL"])
                let entries = leagues.flatMap { league in
                    ((league["leaders"] as? [[String: Any]]) ?? []) + ((league["wild_card"] as? [[String: Any]]) ?? [])
                }
                #expect(entries.count == 30)
                let white = try #require(
                    entries.first { ($0["club"] as? [String: Any])?["abbreviation"] as? String == "CWS" })
                #expect(white["wins"] as? Int == 17 && white["losses"] as? Int == 12)
                // 35-25 at the end: 31 games left after 29.
                #expect(white["remaining"] as? Int == 31)
                #expect(leagues.allSatisfy { ($0["leaders"] as? [Any])?.count == 6 })
            }
        }
    }

    /// Once the day is over, the day after counts its games: Giolito's no-hitter is a White Sox
    /// win and a Pirates loss.
    @Test func theDayAfterCountsTheDaysFinals() async throws {
        let fixture = try await APIServerTests.Fixture()
        defer { fixture.remove() }
        try await fixture.test { client in
            try await client.execute(uri: "/api/standings?date=2020-08-26", method: .get) { response in
                #expect(response.status == .ok)
                let (_, records, _) = try Self.records(String(buffer: response.body))
                #expect(records["CWS"] == "18-12")
                #expect(records["PIT"] == "7-18")
            }
        }
    }
}

/// `GET /api/games/{id}` before the first pitch: the probable pitchers with their W-L and ERA
/// before the day (from the season's games), the lineups' state; and none once under way.
@Suite struct PregameAPITests {
    @Test func theProbablesWithTheirRecordsBeforeTheFirstPitch() async throws {
        let fixture = try await APIServerTests.Fixture { _ in true }
        defer { fixture.remove() }
        try await fixture.test { client in
            try await client.execute(uri: "/api/games/CHA202008250", method: .get) { response in
                #expect(response.status == .ok)
                let answer = try #require(
                    try JSONSerialization.jsonObject(with: Data(String(buffer: response.body).utf8)) as? [String: Any])
                let pregame = try #require(answer["pregame"] as? [String: Any])
                #expect(pregame["confirmed"] as? Bool == false)
                let home = try #require(pregame["home"] as? [String: Any])
                let pitcher = try #require(home["pitcher"] as? [String: Any])
                #expect(pitcher["name"] as? String == "Lucas Giolito")
                #expect(pitcher["wins"] as? Int == 2)
                #expect(pitcher["losses"] as? Int == 2)
                #expect(pitcher["era"] as? String == "3.89")
                #expect((home["lineup"] as? [Any])?.isEmpty == true)
            }
        }
    }
}
