import Alerts
import Baseball
import Foundation
import Testing

/// Which broadcast channels a bid needs, and what the planner sends on one: each channel follows
/// one bid (a game and the side pitching) at one delay bucket; the other side's bid, a score and
/// a channel still being made get nothing.
@Suite struct BroadcastChannelPlanTests {
    static let time = Date(timeIntervalSince1970: 1_598_403_600)

    static func moment(_ kind: Moment.Kind, outs: Int, side: Side = .home, id: String = "m") -> Moment {
        Moment(
            id: id, gameID: "CHA202008250", pitchingSide: side, kind: kind, outs: outs, inning: outs / 3 + 1,
            battingSide: side.opponent, outsInInning: 0, score: PerSide(away: 0, home: 1), perfect: false,
            pitchers: [])
    }

    static func device(_ channel: DeviceChannel, delay: Int = 0, innings: Int = 6) -> Device {
        var preferences = Preferences()
        preferences.spoilerDelaySeconds = delay
        preferences.thresholdInnings = innings
        return Device(id: UUID(), channel: channel, preferences: preferences, registeredAt: time, secretHash: "")
    }

    @Test(arguments: [(0, 0), (1, 30), (30, 30), (45, 60), (60, 60), (61, 120), (121, 300), (300, 300)])
    func aDelayIsRoundedUpToABucket(delay: Int, bucket: Int) {
        #expect(BroadcastChannelPlan.bucket(for: delay) == bucket)
    }

    @Test func theDevicesPreferencesSayWhichBidsWantAChannel() {
        let phone = Self.device(.apns(token: "a", environment: .production, topic: "com.example.app"), delay: 45)
        let late = Self.device(.apns(token: "b", environment: .sandbox, topic: "com.example.app"), innings: 9)
        let browser = Self.device(.webPush(endpoint: "https://push.example/1", p256dh: "k", auth: "s"))
        let activity = Self.device(.liveActivity(token: "c", environment: .production, topic: "com.example.other"))
        let devices = [phone, late, browser, activity]
        let six = BroadcastChannelPlan.wanted(
            Self.moment(.hitlessInnings, outs: 18), teams: ["PIT", "CHA"], at: Self.time, devices: devices)
        #expect(
            six == [
                .init(bid: "CHA202008250-home", topic: "com.example.app", environment: .production, delay: 60),
                .init(bid: "CHA202008250-home", topic: "com.example.other", environment: .production, delay: 0),
            ])
        // Below every threshold, or the bid over: none.
        #expect(
            BroadcastChannelPlan.wanted(
                Self.moment(.hitlessInnings, outs: 15), teams: ["PIT", "CHA"], at: Self.time, devices: devices
            ).isEmpty)
        #expect(
            BroadcastChannelPlan.wanted(
                Self.moment(.brokenUp, outs: 25), teams: ["PIT", "CHA"], at: Self.time, devices: devices
            ).isEmpty)
        // The other side's bid is a channel of its own.
        #expect(
            BroadcastChannelPlan.wanted(
                Self.moment(.hitlessInnings, outs: 18, side: .away), teams: ["PIT", "CHA"], at: Self.time,
                devices: [phone]
            ).map(\.bid) == ["CHA202008250-away"])
        // An activity's token that names its bid is updated by that token: it wants no channel.
        let bound = Self.device(
            .liveActivity(
                token: "d", environment: .production, topic: "com.example.third",
                bid: ActivityBid(gameID: "CHA202008250", pitchingTeam: "CWS")))
        #expect(
            BroadcastChannelPlan.wanted(
                Self.moment(.hitlessInnings, outs: 18), teams: ["PIT", "CHA"], at: Self.time, devices: [bound]
            ).isEmpty)
    }

    @Test func aChannelGetsEveryChangeOfItsBidAtItsDelayAndNothingElse() {
        let key = BroadcastChannelPlan.Key(
            bid: "CHA202008250-home", topic: "com.example.app", environment: .production, delay: 60)
        let channel = Device(
            id: UUID(),
            channel: .liveActivityChannel(id: "Y2g=", bid: key.bid, environment: .production, topic: key.topic),
            preferences: BroadcastChannelPlan.preferences(for: key), registeredAt: Self.time, secretHash: "")
        #expect(BroadcastChannelPlan.Key(channel) == key && key.gameID == "CHA202008250")
        func decide(_ moment: Moment, _ device: Device = channel) -> PlanDecision {
            Planner.decide(moment, teams: ["PIT", "CHA"], at: Self.time, device: device, history: DeviceBidHistory())
        }
        let held = PlanDecision.send(notBefore: Self.time.addingTimeInterval(60))
        // Every change of its bid, below any threshold too, and its end.
        for kind in [Moment.Kind.hitlessOut, .hitlessInnings, .pitchingChange, .perfectGameLost, .ninthInningOut] {
            #expect(decide(Self.moment(kind, outs: 13)) == held, "\(kind)")
        }
        #expect(decide(Self.moment(.completed, outs: 27)) == held)
        #expect(decide(Self.moment(.brokenUp, outs: 25)) == held)
        // Not the other side's bid in the same game (both may be hitless), nor a score.
        #expect(decide(Self.moment(.brokenUp, outs: 25, side: .away)) == .skip(.notFollowingBid))
        #expect(decide(Self.moment(.hitlessInnings, outs: 18, side: .away)) == .skip(.notFollowingBid))
        #expect(decide(Self.moment(.finalScore, outs: 27)) == .skip(.kindNotWanted))
        // A channel still being made has no id of APNs's: nothing for it.
        var making = channel
        making.channel = .liveActivityChannel(
            id: BroadcastChannelPlan.intentPrefix + "1", bid: key.bid, environment: .production, topic: key.topic)
        #expect(decide(Self.moment(.hitlessInnings, outs: 18), making) == .skip(.notFollowingBid))
    }
}
