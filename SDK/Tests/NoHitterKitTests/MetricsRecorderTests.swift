import Foundation
import Testing

@testable import NoHitterKit

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A clock the test moves.
final class TestClock: @unchecked Sendable {
    private let lock = NSLock()
    private var time: Date

    init(_ time: Date) { self.time = time }

    var now: Date { lock.withLock { time } }

    func advance(_ seconds: TimeInterval) { lock.withLock { time = time.addingTimeInterval(seconds) } }
}

/// The network as a script: each request is kept, and answered by the next scripted reply (an
/// answer made from the request, or a failure). The recorder's retries, backoff and attempt counts
/// need answers a real server does not give on demand; `NoHitCLITests` runs the recorder against a
/// real `nohit serve`.
final class ScriptedTransport: HTTPTransport, @unchecked Sendable {
    enum Reply {
        case status(Int, String)
        /// Answers each event of the batch in turn: `true` success, `false` with that error name.
        case perEvent((String, Int) -> (Bool, String?))
        case failure(URLError.Code)
    }

    private let lock = NSLock()
    private var replies: [Reply] = []
    private(set) var requests: [URLRequest] = []

    func script(_ reply: Reply) { lock.withLock { replies.append(reply) } }

    var sent: [[String: [[String: Any]]]] {
        lock.withLock { requests }.map { request in
            (try? JSONSerialization.jsonObject(with: request.httpBody ?? Data())) as? [String: [[String: Any]]] ?? [:]
        }
    }

    func send(_ request: URLRequest) async throws -> (status: Int, body: Data) {
        let reply = lock.withLock {
            requests.append(request)
            return replies.isEmpty ? Reply.perEvent { _, _ in (true, nil) } : replies.removeFirst()
        }
        switch reply {
        case .status(let status, let body): return (status, Data(body.utf8))
        case .failure(let code): throw URLError(code)
        case .perEvent(let decide):
            let body = (try JSONSerialization.jsonObject(with: request.httpBody ?? Data())) as? [String: [Any]] ?? [:]
            var answer: [String: [[String: Any]]] = [:]
            for (collection, events) in body {
                answer[collection] = events.indices.map { index in
                    let (success, name) = decide(collection, index)
                    return success
                        ? ["success": true]
                        : ["success": false, "error": ["name": name ?? "", "description": "scripted"]]
                }
            }
            return (200, try JSONSerialization.data(withJSONObject: answer))
        }
    }
}

struct MetricsRecorderTests {
    static let start = Date(timeIntervalSince1970: 1_795_000_000.25)
    static let app = MetricsRecorder.AppInfo(
        version: "1.4.0", build: "140", model: "iPhone15,2", systemVersion: "18.1", language: "en-US", screenScale: 3)

    static func recorder(
        directory: URL? = nil, clock: TestClock, transport: ScriptedTransport,
        _ adjust: (inout MetricsRecorder.Configuration) -> Void = { _ in }
    ) throws -> MetricsRecorder {
        let folder =
            directory
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("nohitterkit-\(UUID().uuidString)")
        var configuration = MetricsRecorder.Configuration(
            projectID: "app", writeKey: "wk", baseURL: URL(string: "http://127.0.0.1:9/")!, directory: folder, app: app,
            salt: "pepper")
        adjust(&configuration)
        return try MetricsRecorder(configuration: configuration, transport: transport, now: { clock.now })
    }

    @Test func sha256MatchesFIPSVectors() {
        #expect(SHA256.hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SHA256.hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(
            SHA256.hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    }

    /// A session's events go up in one batch, each with Keen's block, the session, the hashed id
    /// and the standard properties; the session's `app_launch` has its start, end and duration.
    @Test func aSessionUploadsEveryEventWithItsProperties() async throws {
        let clock = TestClock(Self.start)
        let transport = ScriptedTransport()
        let recorder = try Self.recorder(clock: clock, transport: transport)
        await recorder.startSession()
        await recorder.viewAppeared("LiveViewController")
        clock.advance(4.5)
        await recorder.viewDisappeared("LiveViewController")
        await recorder.touch(action: "follow:", target: "AttemptCell", screen: "LiveViewController")
        await recorder.setUser(id: "fan-42")
        await recorder.pushOpened(channel: "apns", kind: "hitless-innings")
        clock.advance(55.5)
        await recorder.endSession()

        #expect(await recorder.flush() == .sent(uploaded: 4, kept: 0, dropped: 0))
        let request = try #require(transport.requests.first)
        #expect(request.url?.absoluteString == "http://127.0.0.1:9/3.0/projects/app/events")
        #expect(request.value(forHTTPHeaderField: "Authorization") == "wk")
        #expect(request.httpMethod == "POST")
        let body = try #require(transport.sent.first)
        #expect(Set(body.keys) == ["views", "touches", "pushes", "app_launch"])
        let view = try #require(body["views"]?.first)
        #expect(view["class_name"] as? String == "LiveViewController")
        #expect(view["appearance_duration"] as? Double == 4.5)
        #expect((view["keen"] as? [String: Any])?["timestamp"] as? String == "2026-11-18T11:06:40.250Z")
        let launch = try #require(body["app_launch"]?.first)
        #expect(launch["session_duration"] as? Double == 60)
        #expect(launch["session_end"] as? String == "2026-11-18T11:07:40.250Z")
        let sessions = Set(body.values.flatMap { $0 }.compactMap { $0["session_id"] as? String })
        #expect(sessions.count == 1)
        let tokens = body.values.flatMap { $0 }.compactMap {
            ($0["keen"] as? [String: Any])?["uniqueness_token"] as? String
        }
        #expect(Set(tokens).count == 4)
        for event in body.values.flatMap({ $0 }) {
            let standard = try #require(event["standard_properties"] as? [String: Any])
            #expect(standard["app_version"] as? String == "1.4.0")
            #expect(standard["model"] as? String == "iPhone15,2")
            #expect(standard["first_time_app_launch"] as? Bool == true)
            let hash = try #require((event["user"] as? [String: Any])?["id_hash"] as? String)
            #expect(hash.count == 64 && !hash.contains("fan-42"))
        }
        // Logged in from setUser on: the push carries the user's hash, the view the install's.
        let push = try #require(body["pushes"]?.first)
        #expect((push["standard_properties"] as? [String: Any])?["logged_in"] as? Bool == true)
        #expect((push["user"] as? [String: Any])?["id_hash"] as? String == SHA256.hex("pepper:fan-42"))
        #expect((view["standard_properties"] as? [String: Any])?["logged_in"] as? Bool == false)
        #expect(await recorder.statistics.queued == 0)
        #expect(await recorder.statistics.uploaded == 4)
    }

    /// Results are matched by index: a success leaves, an event Keen calls invalid is dropped,
    /// any other error is kept and tried again, until its third attempt drops it.
    @Test func eachEventsResultIsMatchedByIndex() async throws {
        let clock = TestClock(Self.start)
        let transport = ScriptedTransport()
        let recorder = try Self.recorder(clock: clock, transport: transport)
        for tab in ["live", "scores", "deals"] { await recorder.record("views", ["tab": .string(tab)]) }
        let answers: [(Bool, String?)] = [(true, nil), (false, "InvalidPropertyValueError"), (false, "StorageError")]
        transport.script(.perEvent { _, index in answers[index] })
        #expect(await recorder.flush() == .sent(uploaded: 1, kept: 1, dropped: 1))
        #expect(await recorder.statistics.droppedInvalid == 1)
        for attempt in 2...3 {
            transport.script(.perEvent { _, _ in (false, "StorageError") })
            let result = await recorder.flush()
            let expected: MetricsRecorder.FlushResult =
                attempt < 3 ? .sent(uploaded: 0, kept: 1, dropped: 0) : .sent(uploaded: 0, kept: 0, dropped: 1)
            #expect(result == expected)
        }
        // Only the kept event was sent again, with the same token each time.
        let resent = transport.sent.dropFirst().map { $0["views"] ?? [] }
        #expect(resent.map(\.count) == [1, 1])
        let tokens = transport.sent.map { body in
            (body["views"] ?? []).compactMap { ($0["keen"] as? [String: Any])?["uniqueness_token"] as? String }
        }
        #expect(tokens[1] == [tokens[0][2]] && tokens[2] == tokens[1])
        let statistics = await recorder.statistics
        #expect([statistics.queued, statistics.uploaded, statistics.droppedAfterAttempts] as [Int] == [0, 1, 1])
    }

    /// A failed upload (a 503, no answer at all) keeps the batch, counts an attempt on each event,
    /// and puts the next upload off: 2 s doubling, with jitter, up to the maximum.
    @Test func failedUploadsBackOffAndKeepTheirTokens() async throws {
        let clock = TestClock(Self.start)
        let transport = ScriptedTransport()
        let recorder = try Self.recorder(clock: clock, transport: transport) { $0.maximumAttempts = 10 }
        await recorder.record("views", ["tab": "live"])
        var delays: [TimeInterval] = []
        for failure in 1...8 {
            transport.script(failure % 2 == 0 ? .failure(.timedOut) : .status(503, #"{"message":"busy"}"#))
            guard case .failed(let status, _, let retryAt) = await recorder.flush() else {
                Issue.record("upload \(failure) did not fail")
                return
            }
            #expect(status == (failure % 2 == 0 ? nil : 503))
            delays.append(retryAt.timeIntervalSince(clock.now))
            #expect(await recorder.flush() == .waiting(until: retryAt))
            clock.advance(retryAt.timeIntervalSince(clock.now))
        }
        for (index, delay) in delays.enumerated() {
            let full = min(300, 2 * pow(2, Double(index)))
            #expect(delay >= full * 0.5 && delay <= full, "failure \(index + 1): \(delay) s")
        }
        #expect(await recorder.flush() == .sent(uploaded: 1, kept: 0, dropped: 0))
        let tokens = Set(
            transport.sent.compactMap {
                ($0["views"]?.first?["keen"] as? [String: Any])?["uniqueness_token"] as? String
            })
        #expect(tokens.count == 1 && transport.sent.count == 9)
        #expect(await recorder.statistics.consecutiveFailures == 0)
    }

    /// A full queue drops its oldest events, counted.
    @Test func aFullQueueDropsItsOldest() async throws {
        let clock = TestClock(Self.start)
        let transport = ScriptedTransport()
        let recorder = try Self.recorder(clock: clock, transport: transport) { $0.capacity = 5 }
        for index in 0..<8 { await recorder.record("touches", ["n": .number(Double(index))]) }
        #expect(await recorder.statistics.queued == 5)
        #expect(await recorder.statistics.droppedQueueFull == 3)
        _ = await recorder.flush()
        #expect((transport.sent.first?["touches"] ?? []).compactMap { $0["n"] as? Int } == [3, 4, 5, 6, 7])
    }

    /// The queue and the session outlive the process: a recorder made again on the same directory
    /// (the app was killed) sends what was queued, and closes the session left open at its last
    /// activity.
    @Test func theQueueAndAnOpenSessionSurviveAKill() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "nohitterkit-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let clock = TestClock(Self.start)
        let transport = ScriptedTransport()
        do {
            let first = try Self.recorder(directory: directory, clock: clock, transport: transport)
            await first.startSession()
            clock.advance(30)
            await first.touch(action: "open:", target: "GameCell")
        }
        clock.advance(3600)
        let second = try Self.recorder(directory: directory, clock: clock, transport: transport)
        #expect(await second.statistics.queued == 1)
        await second.startSession()
        #expect(await second.flush() == .sent(uploaded: 2, kept: 0, dropped: 0))
        let launch = try #require(transport.sent.first?["app_launch"]?.first)
        #expect(launch["session_duration"] as? Double == 30)
        let standard = launch["standard_properties"] as? [String: Any]
        #expect(standard?["first_time_app_launch"] as? Bool == true)
        // The second session is not the first launch.
        await second.endSession()
        _ = await second.flush()
        let next = transport.sent.last?["app_launch"]?.first?["standard_properties"] as? [String: Any]
        #expect(next?["first_time_app_launch"] as? Bool == false)
    }

    @Test func badSettingsAreRefusedWithTheReason() throws {
        let clock = TestClock(Self.start)
        #expect(throws: NoHitterError.invalid("maximumAttempts, batchSize and capacity must be at least 1")) {
            try Self.recorder(clock: clock, transport: ScriptedTransport()) { $0.capacity = 0 }
        }
        #expect(throws: NoHitterError.invalid("a project id and a write key are needed to upload events")) {
            try Self.recorder(clock: clock, transport: ScriptedTransport()) { $0.writeKey = "" }
        }
    }
}
