import Clocks
import Crypto
import Delivery
import FakeProviders
import Foundation
import NIOCore
import Testing

/// Broadcast push against `nohit fake-apns` over TLS and HTTP/2, in process: channels made, read,
/// listed and deleted as Apple documents them, the limit on channels, each broadcast's refusals in
/// the order APNs checks them, and one request reaching every activity subscribed to its channel.
@Suite struct BroadcastChannelTests {
    static let bundle = "com.example.nohit"

    struct Harness {
        let server: FakeProviderServer
        let client: APNsBroadcastClient
        let raw: HTTP2Client
        let token: APNsProviderToken

        init(channelLimit: Int = 10_000) async throws {
            let key = P256.Signing.PrivateKey()
            var configuration = FakeProviderConfiguration(
                verificationKey: key.publicKey, keyID: "KEY123", teamID: "TEAM45")
            configuration.channelLimit = channelLimit
            server = try await FakeProviderServer.start(configuration: configuration)
            token = APNsProviderToken(key: key, keyID: "KEY123", teamID: "TEAM45", clock: SystemWallClock())
            var options = HTTP2Client.Configuration()
            options.extraCertificateAuthorities = [server.authority.caCertificatePEM]
            client = try APNsBroadcastClient(
                managementURL: server.baseURL, broadcastURL: server.baseURL, bundleID: BroadcastChannelTests.bundle,
                token: token, client: options)
            raw = try HTTP2Client(origin: server.baseURL, configuration: options)
        }

        /// A broadcast request as given, and APNs's status and reason.
        func broadcast(_ headers: [(String, String)], body: String) async throws -> (Int, String?) {
            let response = try await raw.execute(
                path: "/4/broadcasts/apps/\(BroadcastChannelTests.bundle)",
                headers: [("authorization", "bearer \(try token.current())")] + headers,
                body: ByteBuffer(string: body), timeout: .seconds(30))
            let json =
                (try? JSONSerialization.jsonObject(with: Data(response.body.readableBytesView))) as? [String: Any]
            return (response.status, json?["reason"] as? String)
        }

        func shutdown() async throws {
            await client.shutdown()
            await raw.shutdown()
            try await server.shutdown()
        }
    }

    @Test func channelsAreMadeReadListedAndDeletedWithinTheLimit() async throws {
        let harness = try await Harness(channelLimit: 3)
        let client = harness.client
        var made: [String] = []
        for index in 0..<3 { made.append(try await client.createChannel(storesMessages: index == 2)) }
        #expect(Set(made).count == 3 && made.allSatisfy { Data(base64Encoded: $0) != nil })
        // The fourth is refused: the limit, said.
        await #expect(throws: APNsBroadcastClient.Failure(status: 400, reason: "TooManyChannels")) {
            try await client.createChannel()
        }
        #expect(try await client.allChannels() == made)
        #expect(try await client.channel(made[0]) == .init(id: made[0], storesMessages: false))
        #expect(try await client.channel(made[2])?.storesMessages == true)
        #expect(try await client.deleteChannel(made[0]))
        #expect(try await client.deleteChannel(made[0]) == false, "gone already")
        #expect(try await client.channel(made[0]) == nil)
        #expect(try await client.allChannels() == Array(made.dropFirst()))
        // Room again for one.
        made.append(try await client.createChannel())
        #expect(harness.server.state.channelCounts == (4, 1, 3))
        // Another app's channels are its own.
        let other = try APNsBroadcastClient(
            managementURL: harness.server.baseURL, broadcastURL: harness.server.baseURL, bundleID: "com.example.other",
            token: harness.token,
            client: {
                var options = HTTP2Client.Configuration()
                options.extraCertificateAuthorities = [harness.server.authority.caCertificatePEM]
                return options
            }())
        #expect(try await other.allChannels().isEmpty)
        #expect(try await other.deleteChannel(made[1]) == false)
        await other.shutdown()
        try await harness.shutdown()
    }

    @Test func aBroadcastIsRefusedInTheOrderAPNsChecks() async throws {
        let harness = try await Harness()
        let channel = try await harness.client.createChannel()
        let stored = try await harness.client.createChannel(storesMessages: true)
        let payload = #"{"aps":{"timestamp":1,"event":"update","content-state":{"outs":21}}}"#
        let valid = [
            ("apns-channel-id", channel), ("apns-push-type", "liveactivity"), ("apns-expiration", "0"),
            ("apns-priority", "5"),
        ]
        func without(_ name: String, _ replacement: (String, String)? = nil) -> [(String, String)] {
            valid.compactMap { $0.0 == name ? replacement : $0 }
        }
        // Each refusal with every later check also failing: the earliest is the one said.
        let cases: [([(String, String)], String, Int, String)] = [
            ([("apns-priority", "7")], payload, 400, "MissingChannelId"),
            ([("apns-channel-id", channel), ("apns-priority", "7")], payload, 400, "MissingPushType"),
            (without("apns-push-type", ("apns-push-type", "alert")) + [], "", 400, "InvalidPushType"),
            (without("apns-expiration"), "", 400, "BadExpirationDate"),
            (without("apns-expiration", ("apns-expiration", "soon")), "", 400, "BadExpirationDate"),
            (without("apns-priority", ("apns-priority", "7")), "", 400, "BadPriority"),
            (without("apns-channel-id", ("apns-channel-id", "bm90LWEtY2hhbm5lbA==")), "", 400, "ChannelNotRegistered"),
            (valid, "", 400, "PayloadEmpty"),
            (valid, "not json", 400, "PayloadEmpty"),
            (valid, #"{"aps":{"x":""# + String(repeating: "y", count: 5200) + #""}}"#, 413, "PayloadTooLarge"),
            // A channel that keeps no message takes only an expiration of 0.
            (without("apns-expiration", ("apns-expiration", "1893456000")), payload, 400, "BadExpirationDate"),
        ]
        for (headers, body, status, reason) in cases {
            let (got, said) = try await harness.broadcast(headers, body: body)
            #expect((got, said) == (status, reason), "\(headers) \(body.prefix(40)): \(got) \(said ?? "")")
        }
        #expect(harness.server.state.acceptedBroadcasts.isEmpty)
        // A channel that keeps the latest message takes a later expiration.
        let (status, _) = try await harness.broadcast(
            [
                ("apns-channel-id", stored), ("apns-push-type", "liveactivity"), ("apns-expiration", "1893456000"),
                ("apns-priority", "10"),
            ], body: payload)
        #expect(status == 200)
        // No provider token: refused before anything else.
        let bare = try await harness.raw.execute(
            path: "/4/broadcasts/apps/\(Self.bundle)", headers: [], body: ByteBuffer(), timeout: .seconds(30))
        #expect(bare.status == 403)
        try await harness.shutdown()
    }

    @Test func oneBroadcastReachesEveryActivitySubscribedToItsChannel() async throws {
        let harness = try await Harness()
        let channel = try await harness.client.createChannel()
        let quiet = try await harness.client.createChannel()
        // Three activities started by push-to-start naming the channel (iOS 18) …
        let started = (0..<3).map { String(format: "%064x", 0xA000 + $0) }
        for device in started {
            let start =
                #"{"aps":{"event":"start","timestamp":1,"attributes-type":"BidAttributes","attributes":{},"#
                + #""content-state":{},"input-push-channel":"\#(channel)","alert":{"title":"No-hitter alert"}}}"#
            let response = try await harness.raw.execute(
                path: "/3/device/\(device)",
                headers: [
                    ("authorization", "bearer \(try harness.token.current())"),
                    ("apns-topic", "\(Self.bundle).push-type.liveactivity"), ("apns-push-type", "liveactivity"),
                ], body: ByteBuffer(string: start), timeout: .seconds(30))
            #expect(response.status == 200)
        }
        // … and 997 by the app (`Activity.request(…, pushType: .channel(id))`).
        let devices = (0..<997).map { String(format: "%064x", $0) }
        let subscribe = try JSONSerialization.data(withJSONObject: ["devices": devices])
        let answer = try await harness.raw.execute(
            path: "/channels/\(channel.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)/subscribers",
            headers: [("content-type", "application/json")], body: ByteBuffer(bytes: subscribe),
            timeout: .seconds(30))
        #expect(answer.status == 200)
        let id = UUID().text()
        let payload = Data(#"{"aps":{"timestamp":2,"event":"update","content-state":{"outs":24}}}"#.utf8)
        #expect(
            await harness.client.broadcast(channel: channel, payload: payload, priority: 10, apnsID: id) == .accepted)
        // Sent again after a crash: the same broadcast, counted twice, reaching the same 1,000.
        #expect(
            await harness.client.broadcast(channel: channel, payload: payload, priority: 10, apnsID: id) == .accepted)
        #expect(
            await harness.client.broadcast(channel: quiet, payload: payload, priority: 5, apnsID: UUID().text())
                == .accepted)
        let accepted = harness.server.state.acceptedBroadcasts
        #expect(accepted.map(\.reached) == [1000, 0])
        #expect(accepted.map(\.count) == [2, 1])
        #expect(accepted.first?.apnsID == id && accepted.first?.priority == 10)
        // Too large for APNs: said without sending.
        let large = Data(#"{"aps":{"x":""#.utf8 + Data(repeating: 0x79, count: 5200) + Data(#""}}"#.utf8))
        #expect(
            await harness.client.broadcast(channel: channel, payload: large, priority: 5, apnsID: UUID().text())
                == .rejected(status: 413, reason: "PayloadTooLarge (5216 bytes, at most 5120)"))
        #expect(harness.server.state.acceptedBroadcasts.count == 2)
        try await harness.shutdown()
    }
}
