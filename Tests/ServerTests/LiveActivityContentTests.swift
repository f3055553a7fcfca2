import Alerts
import Delivery
import Foundation
import NoHitterActivity
import Retrosheet
import TestSupport
import Testing

/// The Live Activity's content state as the app reads it: ActivityKit decodes `content-state`
/// with a plain `JSONDecoder` into the app's type, so the server writes it with that same type
/// (`NoHitterActivity`), not with the API's key conversion.
@Suite struct LiveActivityContentTests {
    @Test func giolitosActivityDecodesAsTheAppDecodesItAtEveryMoment() throws {
        let record = try #require(
            try EventFileReader(path: TestData.path("retrosheet/2020/2020CHA.EVA")).games()
                .lazy.compactMap { try? $0.get() }.first { $0.id == "CHA202008250" })
        let (follower, moments) = try TeamVocabularyTests.follow(record, teams: [:])
        let info = follower.info
        var states: [BidActivityAttributes.ContentState] = []
        for moment in moments where moment.pitchingSide == .home && moment.kind.isBid {
            let message = MessageText.render(moment, game: info, jinxSafe: false)
            let payload = try Payloads.liveActivity(message, moment: moment, game: info, at: Date())
            let object = try #require(try JSONSerialization.jsonObject(with: payload) as? [String: Any])
            let aps = try #require(object["aps"] as? [String: Any])
            let content = try JSONSerialization.data(withJSONObject: try #require(aps["content-state"]))
            // As ActivityKit decodes it: no key strategy.
            let state = try JSONDecoder().decode(BidActivityAttributes.ContentState.self, from: content)
            #expect(state.pitchingTeam == "CWS" && state.battingTeam == "PIT")
            #expect(state.pitchers == ["Lucas Giolito"])
            #expect(state.outs == moment.outs && state.innings == moment.outs / 3)
            #expect((aps["event"] as? String == "update") == state.isAlive)
            states.append(state)
        }
        #expect(states.count >= 4)
        #expect(states.dropLast().allSatisfy { $0.isAlive })
        let last = try #require(states.last)
        #expect(last.status == "completed" && last.outs == 27 && last.score == .init(away: 0, home: 4))
        #expect(last.chance == nil, "no chance once over")
        #expect(last.lastPlay?.contains("Erik Gonzalez") == true)
    }
}
