import Foundation
import Pipeline
import Retrosheet
import TestSupport
import Testing

/// "No-hitter!" is the last out's moment: over a replayed day, each bid that ends with its game
/// ends at the play that ended the game, not when the game is said to be over.
@Suite struct LastOutTests {
    @Test func aCompletedBidIsToldAtItsLastOutNotAtTheFinal() throws {
        let games = try ReplaySchedule.games(on: "2020-08-25", data: [TestData.path("retrosheet")])
        let timeline = ReplayTimeline(games: games)
        let moments = timeline.moments()
        let ends = moments.filter { [.completed, .endedNotOfficial].contains($0.moment.kind) }
        #expect(ends.map(\.moment.id) == ["CHA202008250-home-completed-27"])
        for end in ends {
            let game = try #require(games.first { $0.record.id == end.moment.gameID })
            let lastPlay = try #require(game.updates.last?.time)
            #expect(end.time == lastPlay, "\(end.moment.id): told at \(end.time), the last out at \(lastPlay)")
            #expect(end.time < game.end, "\(end.moment.id): not before the game was said to be over")
            // Nothing more of the bid after it: no hitless inning with odds of what has finished.
            #expect(
                !moments.contains {
                    $0.moment.gameID == end.moment.gameID && $0.moment.pitchingSide == end.moment.pitchingSide
                        && $0.moment.kind == .hitlessInnings && $0.moment.outs == end.moment.outs
                })
        }
        // Javier's bid in a 7-inning game: each of its moments says it cannot count.
        let javier = moments.filter { $0.moment.gameID == "HOU202008251" && $0.moment.pitchingSide == .home }
        #expect(!javier.isEmpty && javier.allSatisfy { $0.moment.reason == .sevenInningDoubleheader })
    }
}
