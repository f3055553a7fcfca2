import Alerts
import Crypto
import Foundation
import Retrosheet
import TestSupport
import Testing

/// The whole day of Giolito's no-hitter (2020-08-25, shipped) a minute behind, on the phone and the
/// lock screen: an app's alerts, a Live Activity updated by its own token, one started by push and
/// the bid's 60-s broadcast channel, all at a spoiler delay of 60 s, through the pipeline to the
/// fake APNs over TLS and HTTP/2 on the pipeline's clock. Nothing reaches the fake before its
/// moment's time plus a minute, and every delivery planned reaches it. (The stream, the widget and
/// the web page a minute behind: `SpoilerDelayTests`, `WidgetTests`, `delay_page.py`.)
@Suite(.serialized) struct SpoilerDelayDeliveryTests {
    static let bundle = BroadcastChannelsTests.bundle

    @Test func aWholeDayAMinuteBehindReachesNoDeviceEarlyAndEveryDeviceWithAll() async throws {
        let games = try ReplaySchedule.games(on: BroadcastChannelsTests.day, data: [TestData.path("retrosheet")])
        var preferences = Preferences()
        preferences.spoilerDelaySeconds = 60
        preferences.thresholdInnings = 6
        preferences.frequency = .everyInning
        let hex = { (index: Int) in String(format: "%064x", 0xd000 + index) }
        let channels: [DeviceChannel] = [
            .apns(token: hex(1), environment: .production, topic: Self.bundle),
            .liveActivity(token: hex(2), environment: .production, topic: Self.bundle),
            .liveActivityStart(token: hex(3), environment: .production, topic: Self.bundle, updates: .channel),
        ]
        let devices = channels.map {
            Device(
                id: UUID(), channel: $0, preferences: preferences,
                registeredAt: Date(timeIntervalSince1970: 1_598_000_000), secretHash: "")
        }
        let (store, server, _) = try await PushToStartTests.replay(devices, budget: StartBudget(), fakeBudget: 10)
        defer { Task { try await server.shutdown() } }

        // Every delivery planned, to a device or a channel, by the moment it is for.
        let receivers = try await store.activeDevices()
        #expect(receivers.contains { $0.channel.kind == .liveActivityChannel }, "the bid's 60-s channel")
        #expect(receivers.allSatisfy { $0.preferences.spoilerDelaySeconds == 60 })
        var momentOf: [String: (kind: ChannelKind, time: Date)] = [:]
        for game in games {
            for stored in try await store.moments(gameID: game.info.id, scoreAlerts: true) {
                for receiver in receivers {
                    let id = UUID.delivery(momentID: stored.moment.id, deviceID: receiver.id).text().lowercased()
                    momentOf[id] = (receiver.channel.kind, stored.occurredAt)
                }
            }
        }
        let accepted = server.state.acceptedAt
        var early: [String] = []
        var byKind: [ChannelKind: Int] = [:]
        for (id, at) in accepted {
            let moment = try #require(momentOf[id], "an accepted apns-id \(id) that is no planned delivery")
            byKind[moment.kind, default: 0] += 1
            if at < moment.time.addingTimeInterval(60) {
                early.append("\(moment.kind) \(id) at \(at), play \(moment.time)")
            }
        }
        print(
            "a day a minute behind: \(accepted.count) accepted (\(byKind.map { "\($0.key.rawValue) \($0.value)" }.sorted())), "
                + "\(early.count) early")
        #expect(early.isEmpty, "\(early.prefix(3))")
        // Each one reached the fake: nothing failed, nothing left, every planned row delivered once.
        let counts = try await store.outboxCounts()
        #expect(counts.pending == 0 && counts.sending == 0 && counts.failed == 0 && counts.held == 0)
        #expect(counts.delivered == accepted.count)
        #expect(
            Set(ChannelKind.allCases.filter { byKind[$0] != nil }) == [
                .apns, .liveActivity, .liveActivityChannel, .liveActivityStart,
            ])
        #expect(byKind[.liveActivityStart] == 1, "one start, for Giolito's bid")
    }
}
