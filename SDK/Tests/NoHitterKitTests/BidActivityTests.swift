import Foundation
import NoHitterActivity
import Testing

/// The Live Activity's types read what the server writes, as ActivityKit reads it (a plain
/// `JSONDecoder`): the keys are the service's snake case, spelled by the types themselves.
@Suite struct BidActivityTests {
    @Test func aServerUpdateDecodesWithAPlainDecoder() throws {
        let content = #"""
            {"status":"alive","outs":24,"innings":8,"perfect":false,"pitchers":["Lucas Giolito"],
             "score":{"away":0,"home":4},"pitching_team":"CWS","batting_team":"PIT","batter":"Erik Gonzalez",
             "chance":0.54,"last_play":"Jose Osuna grounds out to third base."}
            """#
        let state = try JSONDecoder().decode(BidActivityAttributes.ContentState.self, from: Data(content.utf8))
        #expect(state.isAlive && state.outs == 24 && state.innings == 8)
        #expect(state.pitchingTeam == "CWS" && state.battingTeam == "PIT")
        #expect(state.score == .init(away: 0, home: 4))
        #expect(state.chance == 0.54 && state.batter == "Erik Gonzalez")
        // Encoded back, the same keys.
        let keys = try #require(
            try JSONSerialization.jsonObject(with: JSONEncoder().encode(state)) as? [String: Any]
        ).keys
        #expect(Set(keys).isSuperset(of: ["pitching_team", "batting_team", "last_play", "chance"]))
    }

    @Test func anUpdateWithoutTheOptionalFieldsDecodes() throws {
        let content = #"""
            {"status":"completed","outs":27,"innings":9,"perfect":false,"pitchers":["Lucas Giolito"],
             "score":{"away":0,"home":4},"pitching_team":"CWS","batting_team":"PIT"}
            """#
        let state = try JSONDecoder().decode(BidActivityAttributes.ContentState.self, from: Data(content.utf8))
        #expect(!state.isAlive && state.chance == nil && state.lastPlay == nil)
        let attributes = BidActivityAttributes(gameID: "CHA202008250", pitchingTeam: "CWS", battingTeam: "PIT")
        let encoded = String(decoding: try JSONEncoder().encode(attributes), as: UTF8.self)
        #expect(encoded.contains(#""game_id":"CHA202008250""#))
    }
}
