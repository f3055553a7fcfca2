import Foundation
import Testing

@testable import NoHitterKit

/// Errors and crashes as `errors` events, a session the app did not end closed with
/// `clean_exit: false`, the daily salt rotation and the test mode, on Linux through the recorder.
struct ErrorsAndPrivacyTests {
    struct FeedError: Error, CustomStringConvertible {
        var description: String { "the scoreboard feed answered 503" }
    }

    @Test func errorsAndDiagnosticsAreEventsOfTheirOwnCollection() async throws {
        let clock = TestClock(MetricsRecorderTests.start)
        let transport = ScriptedTransport()
        let recorder = try MetricsRecorderTests.recorder(clock: clock, transport: transport)
        await recorder.startSession()
        await recorder.recordError(FeedError(), screen: "ScoresViewController")
        await recorder.recordError(
            NSError(domain: NSURLErrorDomain, code: -1009, userInfo: [NSLocalizedDescriptionKey: "offline"]),
            fatal: true)
        // A crash from yesterday, as MetricKit hands it over at this launch.
        let yesterday = MetricsRecorderTests.start.addingTimeInterval(-86_400)
        await recorder.recordDiagnostic(
            kind: "crash", at: yesterday, appVersion: "1.3.9", osVersion: "iPhone OS 18.0 (22A3354)",
            properties: ["signal": 11, "exception_type": 1])
        await recorder.recordDiagnostic(
            kind: "hang", at: yesterday, appVersion: "1.4.0", osVersion: "iPhone OS 18.1",
            properties: ["hang_duration": 2.5])
        #expect(await recorder.flush() == .sent(uploaded: 4, kept: 0, dropped: 0))
        let errors = try #require(transport.sent.first?["errors"])
        #expect(errors.map { $0["kind"] as? String } == ["error", "error", "crash", "hang"])
        #expect(errors[0]["message"] as? String == "the scoreboard feed answered 503")
        #expect(errors[0]["screen"] as? String == "ScoresViewController")
        #expect(errors[0]["fatal"] as? Bool == false)
        #expect((errors[0]["domain"] as? String)?.contains("FeedError") == true)
        #expect(errors[1]["domain"] as? String == NSURLErrorDomain && errors[1]["code"] as? Double == -1009)
        #expect(errors[1]["fatal"] as? Bool == true)
        #expect(errors[2]["fatal"] as? Bool == true && errors[2]["signal"] as? Double == 11)
        #expect(errors[2]["diagnostic_app_version"] as? String == "1.3.9")
        #expect((errors[2]["keen"] as? [String: Any])?["timestamp"] as? String == "2026-11-17T11:06:40.250Z")
        #expect(errors[3]["hang_duration"] as? Double == 2.5)
        // Every one with the app version and OS of this launch in its standard properties.
        for event in errors {
            let standard = try #require(event["standard_properties"] as? [String: Any])
            #expect(standard["app_version"] as? String == "1.4.0" && standard["system_version"] as? String == "18.1")
        }
    }

    /// A session the app ended is `clean_exit: true`; one left open (a crash, a kill) is closed at
    /// the next start with `clean_exit: false`, ending at its last activity.
    @Test func aSessionTheAppDidNotEndIsNotCleanExit() async throws {
        let clock = TestClock(MetricsRecorderTests.start)
        let transport = ScriptedTransport()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "nohitterkit-\(UUID().uuidString)")
        var recorder = try MetricsRecorderTests.recorder(directory: directory, clock: clock, transport: transport)
        await recorder.startSession()
        clock.advance(30)
        await recorder.endSession()
        await recorder.startSession()
        await recorder.viewAppeared("LiveViewController")
        clock.advance(20)
        await recorder.viewDisappeared("LiveViewController")
        // The app dies here; a new process starts from the same directory.
        clock.advance(600)
        recorder = try MetricsRecorderTests.recorder(directory: directory, clock: clock, transport: transport)
        await recorder.startSession()
        _ = await recorder.flush()
        let launches = try #require(transport.sent.first?["app_launch"])
        #expect(launches.map { $0["clean_exit"] as? Bool } == [true, false])
        #expect(launches[1]["session_duration"] as? Double == 20)
    }

    /// With a daily rotation the hash is the same within a day and another the next day; without,
    /// the same every day. In test mode every event says so.
    @Test func theSaltRotatesDailyAndTestModeMarksEveryEvent() async throws {
        let clock = TestClock(MetricsRecorderTests.start)
        let transport = ScriptedTransport()
        let rotating = try MetricsRecorderTests.recorder(clock: clock, transport: transport) {
            $0.saltRotation = .daily
            $0.testMode = true
        }
        let steady = try MetricsRecorderTests.recorder(clock: clock, transport: transport)
        await rotating.setUser(id: "fan-42")
        await steady.setUser(id: "fan-42")
        let (first, steadyFirst) = (await rotating.idHash, await steady.idHash)
        #expect(first == SHA256.hex("pepper:2026-11-18:fan-42"))
        #expect(steadyFirst == SHA256.hex("pepper:fan-42"))
        clock.advance(3_600)
        #expect(await rotating.idHash == first)
        clock.advance(86_400)
        let next = await rotating.idHash
        #expect(next != first && next == SHA256.hex("pepper:2026-11-19:fan-42"))
        #expect(await steady.idHash == steadyFirst)

        await rotating.touch(action: "open", target: "Live")
        await steady.touch(action: "open", target: "Live")
        _ = await rotating.flush()
        _ = await steady.flush()
        let (marked, plain) = (transport.sent[0]["touches"]?.first, transport.sent[1]["touches"]?.first)
        #expect(marked?["test_mode"] as? Bool == true)
        #expect(plain?["test_mode"] == nil)
        #expect((marked?["user"] as? [String: Any])?["id_hash"] as? String == next)
    }
}
