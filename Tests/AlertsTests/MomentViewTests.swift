import Alerts
import Baseball
import Foundation
import Testing

/// The moment's one shape: what payloads send (`object`) is what the API encodes.
@Suite struct MomentViewTests {
    @Test func thePayloadObjectIsTheAPIsEncoding() throws {
        let moments = try MessageTextTests.giolitoMoments()
        #expect(moments.count > 5)
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        for moment in moments {
            for message in [nil, MessageText.render(moment, game: MessageTextTests.game)] {
                let view = MomentView(moment, game: MessageTextTests.game, message: message)
                let encoded = try #require(
                    try JSONSerialization.jsonObject(with: try encoder.encode(view)) as? NSDictionary)
                #expect(encoded == view.object as NSDictionary, "\(moment.id)")
            }
        }
        let completed = try #require(moments.last.map { MomentView($0, game: MessageTextTests.game) })
        #expect(completed.pitchingTeam == "CWS" && completed.battingTeam == "PIT")
        #expect(completed.situation == "end of the top of the 9th")
    }
}
