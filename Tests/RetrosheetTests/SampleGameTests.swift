import Baseball
import Retrosheet
import TestSupport
import Testing

/// The three 2023-2024 games in `samples/`, in the newer format (`NP` lines with pitches, `badj`).
@Suite struct SampleGameTests {
    struct Sample: Sendable, CustomTestStringConvertible {
        var file: String
        var id: String
        var visitors: Int
        var home: Int
        var homePitchers: [String]
        var awayPitchers: [String]
        var testDescription: String { id }
    }

    @Test(arguments: [
        // Detroit's combined no-hitter against Toronto, 2-0.
        Sample(
            file: "2023DET_DET202307080.EVA", id: "DET202307080", visitors: 0, home: 2,
            homePitchers: ["mannm001", "folej001", "langa001"], awayPitchers: ["gausk001", "pearn001", "garcy001"]),
        // Domingo German's perfect game at Oakland, 11-0.
        Sample(
            file: "2023OAK_OAK202306280.EVA", id: "OAK202306280", visitors: 11, home: 0,
            homePitchers: ["searj001", "fujis001", "riosy001", "pruia001", "longs002"], awayPitchers: ["germd001"]),
        // Ronel Blanco's no-hitter against Toronto, 10-0.
        Sample(
            file: "2024HOU_HOU202404010.EVA", id: "HOU202404010", visitors: 0, home: 10,
            homePitchers: ["blanr001"], awayPitchers: ["franb002", "cabrg001", "richt001", "kinei001"]),
    ])
    func sampleGameEndsWithTheRightScore(sample: Sample) throws {
        let games = try EventFileReader(path: TestData.path("retrosheet/samples/\(sample.file)")).games()
        #expect(games.count == 1)
        let game = try games[0].get()
        #expect(game.id == sample.id)
        #expect(game.events.contains { $0.isNoPlay })
        let final = try GameReplay.run(game).state
        #expect(final.score.away == sample.visitors)
        #expect(final.score.home == sample.home)
        #expect(final.pitching(.home).pitchers.map(\.description) == sample.homePitchers)
        #expect(final.pitching(.away).pitchers.map(\.description) == sample.awayPitchers)
        // All three are no-hitters.
        let defense: Side = sample.home == 0 ? .away : .home
        #expect(final.pitching(defense).hits == 0)
        #expect(final.pitching(defense).outs == 27)
    }

    @Test func perfectGameAllowsNoBaserunner() throws {
        let game = try EventFileReader(path: TestData.path("retrosheet/samples/2023OAK_OAK202306280.EVA")).games()[0]
            .get()
        let final = try GameReplay.run(game).state
        #expect(final.pitching(.away).battersReached == 0)
        #expect(final.pitching(.away).battersFaced == 27)
    }

    @Test func placeholdersKeepTheirPitches() throws {
        let game = try EventFileReader(path: TestData.path("retrosheet/samples/2023OAK_OAK202306280.EVA")).games()[0]
            .get()
        let pitched = game.events.filter { $0.isNoPlay && !$0.pitches.isEmpty }
        #expect(pitched.map { game.text($0.pitches) } == [".BBB"])
        // A reliever entered at 3-0 and the walk that followed is charged to the pitcher he relieved.
        var charged: [String] = []
        try GameReplay.run(game) { replayed in
            if replayed.result.eventType == .walk && replayed.result.responsiblePitcher != replayed.result.pitcher {
                charged.append("\(replayed.result.responsiblePitcher)")
            }
        }
        #expect(charged == ["riosy001"])
    }
}
