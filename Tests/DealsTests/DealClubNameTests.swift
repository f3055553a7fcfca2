import Deals
import Foundation
import TestSupport
import Testing

/// A deal's words name the clubs as they were that season: the 2020 Cleveland club is the
/// Indians, the same game dated 2022 names the Guardians.
@Suite struct DealClubNameTests {
    @Test func aDealNamesClevelandAsTheIndiansIn2020AndTheGuardiansIn2022() async throws {
        let cleveland = try ClevelandGame()
        defer { cleveland.remove() }
        // A deal on any Royals game: its words say who played.
        let rules = try DealEdgeCaseTests.rule("test-royals", team: (118, "KCA"), when: #"{"runs_for": {">=": 0}}"#)
        for (year, nickname) in [("2020", "Indians"), ("2022", "Guardians")] {
            let (games, problems) = await SeasonDeals.games(of: [cleveland.path(year)])
            #expect(problems.isEmpty)
            let trigger = try #require(SeasonDeals.triggers(games, rules: rules).first, "\(year)")
            let why = trigger.notice(rules[0]).why
            #expect(why.contains(nickname), "\(year): \(why)")
            #expect(why.contains("Royals"), "\(year): \(why)")
            #expect(!why.contains("CLE") && !why.contains("KCA"), "\(year): \(why)")
        }
    }
}
