import Foundation
import NoHitterActivity
import NoHitterKit
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// NoHitterKit, the apps' SDK, against a real `nohit serve` on loopback: the API client registers
/// a device and changes its preferences; the metrics recorder uploads a session through
/// URLSession, and a batch whose answer is lost after the server stored it is sent again and
/// counted once (its uniqueness tokens).
@Suite(.ownThreads) struct NoHitterKitTests {
    /// URLSession with room for a loaded machine: the SDK gives a request 30 s, which a debug
    /// server beside a full run once took (URLError -1001, the request not said); here each may
    /// take 5 minutes, and one that takes over 10 s is said, with its path.
    struct Patient: HTTPTransport {
        static let session: URLSession = {
            let configuration = URLSessionConfiguration.default
            configuration.timeoutIntervalForRequest = 300
            return URLSession(configuration: configuration)
        }()

        func send(_ request: URLRequest) async throws -> (status: Int, body: Data) {
            var request = request
            request.timeoutInterval = 300
            let started = ContinuousClock.now
            defer {
                let took = ContinuousClock.now - started
                if took > .seconds(10) {
                    print("NoHitterKitTests: \(request.httpMethod ?? "GET") \(request.url?.path ?? "") took \(took)")
                }
            }
            return try await URLSessionTransport(session: Self.session).send(request)
        }
    }

    /// The real transport, with the answer lost on chosen requests after the server has it.
    final class LosingAnswers: HTTPTransport, @unchecked Sendable {
        let real = Patient()
        private let lock = NSLock()
        private var toLose: Int

        init(losing: Int) { toLose = losing }

        func send(_ request: URLRequest) async throws -> (status: Int, body: Data) {
            let answer = try await real.send(request)
            let lose = lock.withLock {
                defer { toLose -= 1 }
                return toLose > 0
            }
            if lose { throw URLError(.networkConnectionLost) }
            return answer
        }
    }

    static func count(_ address: String, project: String, readKey: String, collection: String) async throws -> Int {
        var request = URLRequest(url: URL(string: "\(address)/3.0/projects/\(project)/queries/count")!)
        request.httpMethod = "POST"
        request.setValue(readKey, forHTTPHeaderField: "Authorization")
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(#"{"event_collection":"\#(collection)"}"#.utf8)
        let (status, body) = try await Patient().send(request)
        #expect(status == 200, "\(String(decoding: body, as: UTF8.self))")
        let object = try JSONSerialization.jsonObject(with: body) as? [String: Any]
        return object?["result"] as? Int ?? -1
    }

    @Test func theSDKTalksToARealServer() async throws {
        try await AnalyticsServer.with { server in
            try await Self.drive(address: server.address, keys: server.keys)
        }
    }

    static func drive(address: String, keys: [String: String]) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kit-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let project = try #require(keys["project_id"])

        // The API client: register, read, change.
        let client = NoHitterClient(baseURL: URL(string: address)!, transport: Patient())
        let device = try await client.register(
            .apns(token: String(repeating: "ab", count: 32), environment: "sandbox", topic: "org.example.nohit"),
            preferences: .init(thresholdInnings: 6))
        #expect(try await client.preferences(of: device).thresholdInnings == 6)
        let changed = try await client.setFavouriteTeams(["NYY", "SEA"], of: device)
        // Read back in MLB's abbreviations, as sent.
        #expect(changed.favouriteTeams == ["NYY", "SEA"] && changed.thresholdInnings == 6, "\(changed)")
        #expect(changed.unofficialBids == true, "\(changed)")
        let deals = try await client.dealsToday()
        #expect(!deals.isEmpty)
        #expect(deals.allSatisfy { $0.on || $0.whyNot != nil }, "\(deals)")
        let chosen = try await client.setDeals([deals[0].rule], of: device)
        #expect(chosen.deals == [deals[0].rule])
        // Bad input: the server's reason comes through.
        await #expect(throws: NoHitterError.self) {
            try await client.setDeals(["no-such-deal"], of: device)
        }
        do {
            _ = try await client.setDeals(["no-such-deal"], of: device)
        } catch NoHitterError.http(let status, let message) {
            #expect(status == 400 && message.contains("no-such-deal"), "\(message)")
        }
        // A bid's broadcast channel: this server has no APNs key (console only), so none; and a
        // bad question is told why.
        #expect(
            try await client.liveActivityChannel(game: "CHA202008250", topic: "org.example.nohit", delay: 45) == nil)
        do {
            _ = try await client.liveActivityChannel(game: "CHA202008250", topic: "org.example.nohit", side: "both")
            Issue.record("side=both was taken")
        } catch NoHitterError.http(let status, let message) {
            #expect(status == 400 && message.contains("side must be home or away"), "\(message)")
        }
        // The app's push-to-start token (iOS 17.2-17.x: updates by the activity's own token, which
        // it registers once the server started the activity).
        let starter = try await client.register(
            .liveActivityStart(
                token: String(repeating: "cd", count: 32), environment: "sandbox", topic: "org.example.nohit",
                updates: "token"), preferences: .init(thresholdInnings: 7))
        #expect(try await client.preferences(of: starter).thresholdInnings == 7)
        _ = try await client.register(
            .liveActivity(token: String(repeating: "ce", count: 32), environment: "sandbox", topic: "org.example.nohit")
        )
        // The activity's token with its attributes: it hears its bid only (a bid the server
        // cannot read is refused, so the attributes were sent).
        let giolito = BidActivityAttributes(gameID: "CHA202008250", pitchingTeam: "CWS", battingTeam: "PIT")
        _ = try await client.register(
            .liveActivity(
                token: String(repeating: "cf", count: 32), environment: "sandbox", topic: "org.example.nohit",
                bid: giolito))
        do {
            var garbled = giolito
            garbled.pitchingTeam = "C W S"
            _ = try await client.register(
                .liveActivity(
                    token: String(repeating: "d0", count: 32), environment: "sandbox", topic: "org.example.nohit",
                    bid: garbled))
            Issue.record("a bid the server cannot read was taken")
        } catch NoHitterError.http(let status, let message) {
            #expect(status == 400 && message.contains("pitching_team"), "\(message)")
        }
        let stranger = NoHitterClient.Credentials(id: device.id, secret: "not-the-secret")
        await #expect(throws: NoHitterError.self) { try await client.preferences(of: stranger) }

        // The recorder: a session, uploaded; the first answer lost after the server stored it.
        let transport = LosingAnswers(losing: 1)
        let recorder = try MetricsRecorder(
            configuration: .init(
                projectID: project, writeKey: try #require(keys["write_key"]), baseURL: URL(string: address)!,
                directory: directory.appendingPathComponent("recorder"),
                app: .init(
                    version: "1.0", build: "1", model: "iPhone15,2", systemVersion: "18.1", language: "en-US",
                    screenScale: 3),
                salt: "salt"),
            transport: transport)
        await recorder.startSession()
        for screen in ["Live", "Scores", "Live"] {
            await recorder.viewAppeared(screen)
            await recorder.viewDisappeared(screen)
        }
        await recorder.touch(action: "follow:", target: "AttemptCell", screen: "Live")
        await recorder.endSession()
        guard case .failed(nil, _, _) = await recorder.flush() else {
            Issue.record("the lost answer did not fail the upload")
            return
        }
        #expect(await recorder.flush(force: true) == .sent(uploaded: 5, kept: 0, dropped: 0))
        let readKey = try #require(keys["read_key"])
        #expect(try await Self.count(address, project: project, readKey: readKey, collection: "views") == 3)
        #expect(try await Self.count(address, project: project, readKey: readKey, collection: "touches") == 1)
        #expect(try await Self.count(address, project: project, readKey: readKey, collection: "app_launch") == 1)
    }
}
