import Alerts
import Foundation
import Testing

/// The moment's one shape: every surface (the API, the stream, each push's `moment`) writes the
/// view with the service's one encoding.
@Suite struct MomentViewTests {
    @Test func theViewIsWrittenInTheOneEncoding() throws {
        let moments = try MessageTextTests.giolitoMoments()
        #expect(moments.count > 5)
        for moment in moments {
            for message in [nil, MessageText.render(moment, game: MessageTextTests.game)] {
                let view = MomentView(moment, game: MessageTextTests.game, message: message)
                let encoded = try #require(
                    try JSONSerialization.jsonObject(with: try WireJSON.encoder.encode(view)) as? [String: Any])
                // Snake case, and what is not there is left out (not null).
                #expect(encoded["game_id"] as? String == moment.gameID)
                #expect(encoded["outs_in_inning"] as? Int == moment.outsInInning)
                #expect(encoded["pitching_team"] as? String == "CWS")
                #expect((encoded["title"] != nil) == (message != nil), "\(moment.id)")
                #expect(encoded["occurred_at"] == nil)
                #expect(!encoded.keys.contains { $0.contains { $0.isUppercase } }, "\(encoded.keys)")
            }
        }
        let completed = try #require(moments.last.map { MomentView($0, game: MessageTextTests.game) })
        #expect(completed.pitchingTeam == "CWS" && completed.battingTeam == "PIT")
        #expect(completed.situation == "end of the top of the 9th")
    }
}
