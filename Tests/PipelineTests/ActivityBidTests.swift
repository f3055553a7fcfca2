import Alerts
import Foundation
import Pipeline
import Retrosheet
import TestSupport
import Testing

/// A Live Activity shows one bid (its attributes: the game and the team pitching). Registered with
/// that bid, its token hears every change of it and nothing of another bid, whose state would
/// replace its own on the lock screen; registered without one, it hears every bid past the fan's
/// threshold (an app from before activities named their bid). The whole day of 2020-08-25 through
/// the pipeline and the fake APNs, where several bids are on at once.
@Suite(.serialized) struct ActivityBidTests {
    @Test func anActivityNamingItsBidHearsEveryChangeOfItAndNothingOfAnother() async throws {
        let games = try ReplaySchedule.games(on: BroadcastChannelsTests.day, data: [TestData.path("retrosheet")])
        let timeline = ReplayTimeline(games: games).moments(scoreAlerts: false)
        // The two bids of the day with the most moments (Giolito's no-hitter among them).
        var byBid: [String: [Moment]] = [:]
        var abbreviation: [String: ActivityBid] = [:]
        for (moment, game, _) in timeline where moment.kind.isBid {
            byBid[moment.bidKey, default: []].append(moment)
            abbreviation[moment.bidKey] = ActivityBid(
                gameID: moment.gameID, pitchingTeam: game.team(moment.pitchingSide).abbreviation)
        }
        let bids = byBid.keys.sorted { (byBid[$0]!.count, $0) > (byBid[$1]!.count, $1) }.prefix(2)
        try #require(bids.count == 2 && bids.contains("CHA202008250-home"), "\(byBid.mapValues(\.count))")
        #expect(abbreviation["CHA202008250-home"] == ActivityBid(gameID: "CHA202008250", pitchingTeam: "CWS"))

        func device(_ index: Int, bid: ActivityBid?) -> Device {
            Device(
                id: UUID(),
                channel: .liveActivity(
                    token: String(format: "%064x", 0xb000 + index), environment: .production,
                    topic: PushToStartTests.bundle, bid: bid),
                preferences: Preferences(), registeredAt: Date(timeIntervalSince1970: 1_598_000_000), secretHash: "")
        }
        let bound = bids.enumerated().map { device($0.offset, bid: abbreviation[$0.element]) }
        let unbound = device(9, bid: nil)
        let (store, server, _) = try await PushToStartTests.replay(
            bound + [unbound], budget: StartBudget(), fakeBudget: 100)
        let accepted = Set(server.state.accepted.map(\.apnsID))
        // Every moment the pipeline stored (the outs too, where it knew the odds).
        var stored: [Moment] = []
        for game in Set(timeline.map(\.moment.gameID)) {
            stored += try await store.moments(gameID: game, scoreAlerts: false).map(\.moment)
        }
        // What each device got, as the bids of its moments.
        func heard(_ device: Device) -> [String: Int] {
            var counts: [String: Int] = [:]
            for moment in stored
            where accepted.contains(UUID.delivery(momentID: moment.id, deviceID: device.id).uuidString.lowercased()) {
                counts[moment.bidKey, default: 0] += 1
            }
            return counts
        }
        for (device, bid) in zip(bound, bids) {
            // Every change of its bid, each once, and nothing else.
            let changes = stored.filter { $0.bidKey == bid }.count
            #expect(changes >= byBid[bid]!.count)
            #expect(heard(device) == [bid: changes], "\(bid): \(heard(device))")
        }
        // Without a bid: the bids past the fan's threshold (6 innings), Giolito's; not the other,
        // whose activity (started below it, as a fan with a lower threshold would have it) hears
        // every change of it above.
        let all = heard(unbound)
        #expect(all.keys.contains("CHA202008250-home"), "\(all)")
        #expect(all.keys.allSatisfy { byBid[$0]!.contains { $0.outs >= 18 } }, "\(all)")
        print("activity bids: \(bound.map(heard)); without a bid: \(all)")
    }
}
