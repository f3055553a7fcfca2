import Baseball
import Foundation
import Testing

@testable import StatsAPI

/// The feed's status codes: what the poller does with each, and the status in the engine's words.
@Suite struct FeedStatusTests {
    @Test func unknownStatusCodesAreKeptNotFatal() throws {
        let json = #"{"codedGameState": "Z", "detailedState": "Something New"}"#
        let status = try JSONDecoder().decode(FeedStatus.self, from: Data(json.utf8))
        #expect(status.phase == .unknown("Z"))
        for (code, phase) in [
            ("S", FeedStatus.Phase.notStarted), ("P", .notStarted), ("PW", .notStarted), ("I", .live), ("M", .live),
            ("N", .live), ("F", .final), ("O", .final), ("FR", .final), ("OR", .final), ("FT", .final),
            ("D", .postponed), ("C", .cancelled), ("U", .suspended), ("T", .suspended),
        ] {
            #expect(FeedStatus(codedGameState: code).phase == phase, "\(code)")
        }
    }

    @Test func theStatusInTheEnginesWords() {
        #expect(FeedStatus(codedGameState: "PW").gameStatus.phase == .warmup)
        #expect(FeedStatus(codedGameState: "S").gameStatus.phase == .scheduled)
        #expect(FeedStatus(codedGameState: "I", detailedState: "In Progress").gameStatus.phase == .live)
        let delayed = FeedStatus(
            abstractGameState: "Live", codedGameState: "I", detailedState: "Delayed: Rain", reason: "Rain")
        #expect(delayed.gameStatus == GameStatus(.delayed, detail: "Rain"))
        let postponed = FeedStatus(
            abstractGameState: "Final", codedGameState: "D", detailedState: "Postponed", reason: "Rain")
        #expect(
            postponed.gameStatus(resumesOn: "2024-05-02")
                == GameStatus(.postponed, detail: "Rain", resumesOn: "2024-05-02"))
        #expect(
            FeedStatus(abstractGameState: "Final", codedGameState: "F", detailedState: "Final").gameStatus
                == GameStatus(.final))
        #expect(FeedStatus(codedGameState: "U", detailedState: "Suspended").gameStatus.phase == .suspended)
    }
}
