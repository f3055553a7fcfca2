import Foundation
import TestSupport
import Testing

/// `nohit winexp` as a user runs it, over the shipped 2020 season.
@Suite(.ownThreads) struct WinExpCommandTests {
    @Test func theTableAsTextAndAsJSON() throws {
        let season = TestData.path("retrosheet/2020")
        let text = try Executable.run("nohit", ["winexp", season])
        #expect(text.status == 0, "\(text.standardError)")
        #expect(text.standardOutput.contains("Counted from Retrosheet's play-by-play of 1 season (2020), 870 games"))
        #expect(text.standardOutput.contains("Start of the 9th, tied: ."))
        #expect(text.standardOutput.contains("Extra innings, bottom (home lead)"))
        let json = try Executable.run("nohit", ["winexp", "--json", season])
        #expect(json.status == 0)
        let object = try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any]
        #expect((object?["games"] as? [Int])?.count == 10_080)
        #expect(object?["games_counted"] as? Int == 870)
        #expect((object?["layout"] as? String)?.hasPrefix("cell = ") == true)
        // A path that is not there: said, status 2.
        let missing = try Executable.run("nohit", ["winexp", "/nonexistent/2020"])
        #expect(missing.status == 2)
        #expect(missing.standardError.contains("/nonexistent/2020"))
    }
}
