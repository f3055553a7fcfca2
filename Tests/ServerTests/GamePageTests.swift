import Baseball
import Foundation
import HummingbirdTesting
import Testing

/// A game's page is read from what its follower kept as the game went (the play-by-play, the
/// pitchers' lines), never worked out again by replaying the game on each request.
@Suite struct GamePageTests {
    @Test func aThousandGamePagesMakeNoGameEngine() async throws {
        let fixture = try await APIServerTests.Fixture()
        defer { fixture.remove() }
        let counter = GameEngine.Counter()
        try await GameEngine.$constructions.withValue(counter) {
            try await fixture.test { client in
                for _ in 0..<1000 {
                    try await client.execute(uri: "/api/games/CHA202008250", method: .get) { response in
                        #expect(response.status == .ok)
                    }
                }
            }
            #expect(counter.total == 0)
            // The counter counts: one engine made here is one.
            _ = GameEngine(starters: [])
            #expect(counter.total == 1)
        }
    }
}
