import Deals
import Foundation
import TestSupport
import Testing

/// A deal's words name the clubs as they were that season: the 2020 Cleveland club is the
/// Indians, the same game dated 2022 names the Guardians.
@Suite struct DealClubNameTests {
    @Test func aDealNamesClevelandAsTheIndiansIn2020AndTheGuardiansIn2022() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "nohit-deal-cle-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        // Kansas City at Cleveland, Sep 10 2020 (Brady Singer's near no-hitter), and the same game
        // dated two years later.
        let text = String(decoding: try TestData.bytes("retrosheet/2020/2020CLE.EVA"), as: UTF8.self)
        let start = try #require(text.range(of: "id,CLE202009100\n"))
        let end = text[start.upperBound...].range(of: "\nid,")?.lowerBound ?? text.endIndex
        let game2020 = String(text[start.lowerBound..<end]) + "\n"
        let game2022 = game2020.replacingOccurrences(of: "id,CLE202009100", with: "id,CLE202209100")
            .replacingOccurrences(of: "info,date,2020/09/10", with: "info,date,2022/09/10")
        try Data(game2020.utf8).write(to: folder.appendingPathComponent("2020CLE.EVA"))
        try Data(game2022.utf8).write(to: folder.appendingPathComponent("2022CLE.EVA"))
        // A deal on any Royals game: its words say who played.
        let rules = try DealEdgeCaseTests.rule("test-royals", team: (118, "KCA"), when: #"{"runs_for": {">=": 0}}"#)
        for (year, nickname) in [("2020", "Indians"), ("2022", "Guardians")] {
            let (games, problems) = await SeasonDeals.games(of: [folder.appendingPathComponent("\(year)CLE.EVA").path])
            #expect(problems.isEmpty)
            let trigger = try #require(SeasonDeals.triggers(games, rules: rules).first, "\(year)")
            let why = trigger.notice(rules[0]).why
            #expect(why.contains(nickname), "\(year): \(why)")
            #expect(why.contains("Royals"), "\(year): \(why)")
            #expect(!why.contains("CLE") && !why.contains("KCA"), "\(year): \(why)")
        }
    }
}
