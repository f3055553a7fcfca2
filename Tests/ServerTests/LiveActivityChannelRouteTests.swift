import Alerts
import Foundation
import Hummingbird
import HummingbirdTesting
import Pipeline
import Testing

/// `GET /api/games/{id}/live-activity-channel`: the channel the service keeps for a game, app,
/// environment and delay (rounded up), read from its devices as the channels keep them; 404 until
/// one is made, 503 where the service keeps none, 400 naming a bad parameter.
@Suite struct LiveActivityChannelRouteTests {
    @Test func anAppFindsTheChannelToStartItsActivityOn() async throws {
        var fixture = try await APIServerTests.Fixture { _ in true }
        defer { fixture.remove() }
        let game = "CHA202008250"
        let bundle = "com.example.nohit"
        // The channel the service made for the home side's bid at 60 s, and one for each side's
        // in the sandbox (what BroadcastChannels writes).
        func channel(_ id: String, side: String, environment: APNsEnvironment) -> Device {
            Device(
                id: UUID(),
                channel: .liveActivityChannel(id: id, bid: "\(game)-\(side)", environment: environment, topic: bundle),
                preferences: BroadcastChannelPlan.preferences(
                    for: .init(bid: "\(game)-\(side)", topic: bundle, environment: environment, delay: 60)),
                registeredAt: fixture.clock.now(), secretHash: "")
        }
        try await fixture.store.register(channel("Y2hhbm5lbA==", side: "home", environment: .production))
        try await fixture.store.register(channel("aG9tZQ==", side: "home", environment: .sandbox))
        try await fixture.store.register(channel("YXdheQ==", side: "away", environment: .sandbox))
        let channels = BroadcastChannels(
            clients: BroadcastClients { _ in nil }, store: fixture.store,
            directory: DeviceDirectory(store: fixture.store), clock: fixture.clock)
        // What a round reads.
        await channels.step()
        let path = "/api/games/\(game)/live-activity-channel"

        // No APNs key: none kept, and said.
        try await fixture.test { client in
            try await client.execute(uri: "\(path)?topic=\(bundle)", method: .get) { response throws in
                #expect(response.status == .notFound)
                #expect(String(buffer: response.body).contains("no APNs key"))
            }
        }
        fixture.options.broadcastChannel = { channels.channel(for: $0) }
        try await fixture.test { client in
            // 45 s is the 60 s bucket.
            try await client.execute(uri: "\(path)?topic=\(bundle)&delay=45", method: .get) { response throws in
                #expect(response.status == .ok)
                let json = try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any]
                #expect(json?["channel_id"] as? String == "Y2hhbm5lbA==")
                #expect(json?["delay"] as? Int == 60 && json?["environment"] as? String == "production")
                #expect(json?["game_id"] as? String == game && json?["topic"] as? String == bundle)
                #expect(json?["side"] as? String == "home")
            }
            // Both sides hold one in the sandbox: the side is asked, then each is given.
            let sandbox = "\(path)?topic=\(bundle)&delay=60&environment=development"
            try await client.execute(uri: sandbox, method: .get) { response throws in
                #expect(response.status == .badRequest)
                #expect(String(buffer: response.body).contains("give side"))
            }
            for (side, id) in [("home", "aG9tZQ=="), ("away", "YXdheQ==")] {
                try await client.execute(uri: "\(sandbox)&side=\(side)", method: .get) { response throws in
                    let json = try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any]
                    #expect(json?["channel_id"] as? String == id && json?["side"] as? String == side)
                }
            }
            // Not at another delay, nor in the sandbox: a 404 that says when one comes.
            for query in ["topic=\(bundle)", "topic=\(bundle)&delay=120"] {
                try await client.execute(uri: "\(path)?\(query)", method: .get) { response throws in
                    #expect(response.status == .notFound)
                    #expect(String(buffer: response.body).contains("bid worth following"))
                }
            }
            for (query, named) in [
                ("", "topic"), ("topic=\(bundle)&environment=staging", "environment"),
                ("topic=\(bundle)&delay=301", "delay"), ("topic=not%20a%20bundle", "topic"),
                ("topic=\(bundle)&side=both", "side"),
            ] {
                try await client.execute(uri: "\(path)?\(query)", method: .get) { response throws in
                    #expect(response.status == .badRequest, "\(query)")
                    #expect(String(buffer: response.body).contains(named), "\(query)")
                }
            }
        }
    }
}
