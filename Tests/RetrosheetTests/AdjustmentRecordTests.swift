import Baseball
import Retrosheet
import TestSupport
import Testing

/// Adjustment records in real 2020 games: the extra-inning runner (`radj`) and a batter batting
/// from his other side (`badj`).
@Suite struct AdjustmentRecordTests {
    static func game(_ file: String, _ id: String) throws -> GameRecord {
        let games = try EventFileReader(path: TestData.path("retrosheet/2020/\(file)")).games()
        return games.lazy.compactMap { try? $0.get() }.first { $0.id == id }!
    }

    @Test func extraInningRunnerStartsOnSecond() throws {
        let game = try Self.game("2020HOU.EVA", "HOU202007290")
        var leadOffs: [Int: (runner: String, pitcher: String)] = [:]
        try GameReplay.run(game) { replayed in
            let result = replayed.result
            if result.inning >= 10 && result.outsBefore == 0
                && leadOffs[result.inning * 2 + result.battingSide.rawValue] == nil
            {
                leadOffs[result.inning * 2 + result.battingSide.rawValue] = (
                    "\(result.runnersBefore.second)", "\(result.pitcher)"
                )
            }
        }
        #expect(leadOffs[20]?.runner == "turnj001")
        #expect(leadOffs[21]?.runner == "tuckk001")
        #expect(leadOffs[22]?.runner == "herne001")
    }

    @Test func batterAdjustmentAppliesToThatBatter() throws {
        let game = try Self.game("2020ATL.EVN", game2020ATLWithBadj)
        let adjusted = game.events.filter { game.adjustments(before: $0).batterHand != 0 }
        #expect(!adjusted.isEmpty)
        #expect(adjusted.allSatisfy { $0.batter == PlayerID("albio001")! })
        #expect(adjusted.allSatisfy { game.adjustments(before: $0).batterHand == UInt8(ascii: "L") })
    }

    /// The game of `2020ATL.EVN` that holds `badj,albio001,L`.
    let game2020ATLWithBadj: String = {
        let lines = (try? TestData.lines("retrosheet/2020/2020ATL.EVN")) ?? []
        var id = ""
        for line in lines {
            if line.hasPrefix("id,") { id = String(line.dropFirst(3)) }
            if line == "badj,albio001,L" { return id }
        }
        return id
    }()
}
