import Crypto
import FakeProviders
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// An instance paused past its lease while it fans out, then resumed (issue 57, item 1): as a
/// process stopped by the kernel, a debugger or a long garbage-collection pause elsewhere would be,
/// it wakes believing it still holds what it claimed. Three `nohit replay` instances share one
/// PostgreSQL database; the one paused (SIGSTOP) sends to a fake APNs of its own, so every request
/// is known by its sender. It is paused at each of the three points at once:
/// - before a send: deliveries it had claimed and not yet sent;
/// - mid-send: its fake holds every request from a moment on, and it is paused once some are held;
/// - between the provider's answer and the outcome's write: the held requests are answered while it
///   is stopped, so the answers wait in its sockets.
/// It stays stopped for three leases, or until the others have taken back every delivery it held
/// (a minute at most), then goes on (SIGCONT). The promise: it sends nothing the others took over, its late
/// outcomes change nothing, and the day still reaches every device — a repeat only for what it had
/// in flight at the pause, with the same ids.
/// Broadcast channels are off here (`NOHIT_APNS_BROADCAST=false`): a channel made through one fake
/// is unknown to the other, as it could not be on APNs, which is one service; the crash test above
/// (one fake) covers broadcasts.
extension InstancesTests {
    @Test func aPausedInstanceSendsNothingTakenOverAndItsLateOutcomesChangeNothing() async throws {
        let harness = try await Harness(devices: [
            ["--count", "1200", "--frequency", "once-per-bid", "--seed", "5"],
            ["--count", "300", "--mix", "--seed", "6"],
        ])
        let ownFake = try await Self.fakeOfItsOwn(harness)
        let own = ownFake.server
        let others = harness.crash.server
        let devices = try await harness.store { try await $0.activeDevices() }
        let expected = try CrashRecoveryTests.Harness.expectedDeliveries(devices: devices, day: Self.day)

        let seed = TestSeed.draw()
        print("paused instance test: pause point drawn with seed \(seed)")
        var random = SplitMix(seed: seed)
        let (speed, lease, staleAfterMinutes) = (Self.pace, 4, 1440)
        let off = ["NOHIT_APNS_BROADCAST": "false"]
        let paused = try harness.startReplay(
            instance: "paused", speed: speed, leaseSeconds: lease, staleAfterMinutes: staleAfterMinutes,
            fakeAPNs: ownFake.directory, environment: off)
        var running = [(id: "paused", process: paused.process, log: paused.log)]
        for id in ["i1", "i2"] {
            let started = try harness.startReplay(
                instance: id, speed: speed, leaseSeconds: lease, staleAfterMinutes: staleAfterMinutes,
                environment: off)
            running.append((id, started.process, started.log))
        }
        defer {
            for instance in running where instance.process.isRunning {
                kill(instance.process.processIdentifier, SIGCONT)
                kill(instance.process.processIdentifier, SIGKILL)
            }
        }
        func accepted() -> Int { own.state.uniqueAcceptedCount + others.state.uniqueAcceptedCount }

        // The pause: at a point drawn among 20-50 % of the day's alerts, once the instance has
        // requests held unanswered (a burst of them, or one and 100 ms).
        let target = Int(Double(expected.count) * (0.2 + Double.random(in: 0..<0.3, using: &random)))
        while accepted() < target && running.allSatisfy(\.process.isRunning) {
            try await Task.sleep(for: .milliseconds(2))
        }
        own.state.hold()
        var firstHeld: ContinuousClock.Instant?
        let holding = ContinuousClock.now
        while paused.process.isRunning && ContinuousClock.now - holding < .seconds(120) {
            let held = own.state.heldAPNsIDs.count
            if held > 0 && firstHeld == nil { firstHeld = .now }
            if held >= 32 || (firstHeld.map { .now - $0 > .milliseconds(100) } ?? false) { break }
            try await Task.sleep(for: .milliseconds(2))
        }
        kill(paused.process.processIdentifier, SIGSTOP)
        let pausedAt = ContinuousClock.now
        let midSend = Set(own.state.heldAPNsIDs)
        let sentBeforePause = Set(own.state.accepted.map(\.apnsID))
        let claimed = Set(
            try await harness.store { try await $0.inFlightByInstance() }["paused", default: []]
                .map { $0.uuidString.lowercased() })
        let beforeSend = claimed.subtracting(midSend).subtracting(sentBeforePause)
        // The answers, given while it cannot read them.
        own.state.release()
        // Stopped for three leases, or until the others have taken back every delivery it held, if
        // later (a minute at most: a transaction it was stopped in holds its locks, and the others
        // wait on them; see docs/operating.md).
        _ = try await ServedDay.eventually("three leases", within: 300) { () -> Bool? in
            ContinuousClock.now - pausedAt > .seconds(3 * lease) ? true : nil
        }
        _ = try? await ServedDay.eventually("the paused instance's deliveries taken back", within: 60) {
            () -> Bool? in
            let inFlight = try await harness.store { try await $0.inFlightByInstance() }["paused", default: []]
            return inFlight.isEmpty ? true : nil
        }
        let pausedFor = ContinuousClock.now - pausedAt
        let ownBeforeResume = Dictionary(own.state.accepted.map { ($0.apnsID, $0.count) }, uniquingKeysWith: +)
        kill(paused.process.processIdentifier, SIGCONT)

        _ = try await ServedDay.eventually("the day's end in every instance", within: 1200) {
            running.allSatisfy { !$0.process.isRunning } ? true : nil
        }
        for instance in running where instance.process.terminationStatus != 0 {
            print("paused instance test: \(instance.id) ended with \(instance.process.terminationStatus):")
            print(CrashRecoveryTests.log(instance.log).suffix(4000))
        }
        #expect(running.allSatisfy { $0.process.terminationStatus == 0 }, "seed \(seed)")

        let verdict = try await Verdict(harness: harness, own: own, others: others, expected: expected, apart: "paused")
        let inDoubtAtPause = claimed.union(midSend)
        let sentAfterResume = Set(
            own.state.accepted.filter { $0.count > ownBeforeResume[$0.apnsID, default: 0] }.map(\.apnsID))
        print(
            "paused instance test (seed \(seed)): \(expected.count) expected alerts to 1,500 devices; paused at "
                + "\(sentBeforePause.count) of its own sends for \(pausedFor): \(beforeSend.count) claimed and not "
                + "sent (before a send), \(midSend.count) held unanswered (mid-send) and answered while it was "
                + "stopped (between the answer and the outcome); \(verdict.takenFromApart.count) taken back from it; "
                + "it sent \(sentAfterResume.count) after it went on, none taken over: "
                + "\(sentAfterResume.isDisjoint(with: verdict.takenFromApart.union(inDoubtAtPause))); missing "
                + "\(verdict.missing.count), unexpected \(verdict.unexpected.count), superseded "
                + "\(verdict.superseded.count), accepted twice \(verdict.repeated.count) (all in doubt at the pause: "
                + "\(verdict.repeated.isSubset(of: inDoubtAtPause))); lapsed elsewhere \(verdict.lapsed.count), "
                + "given up on while held \(verdict.gaveUp.count)")

        let resent = sentAfterResume.intersection(verdict.takenFromApart.union(inDoubtAtPause))
        if !resent.isEmpty {
            print(
                "paused instance test (seed \(seed)): sent after it went on, though in doubt or taken over: "
                    + "\(resent.intersection(beforeSend).count) of those claimed and not sent, "
                    + "\(resent.intersection(midSend).count) of those held, "
                    + "\(resent.intersection(verdict.takenFromApart).count) taken back from it, "
                    + "\(resent.intersection(verdict.othersAccepted).count) sent by the others too")
        }
        #expect(!midSend.isEmpty, "paused with no request held (seed \(seed))")
        // It sent nothing the others sent (what it had taken back from it, or anything else), and
        // nothing again that it had sent before the pause. (A row taken back from it that the others
        // could not deliver may come back to it as a retry: sending that is its turn, not a repeat.)
        #expect(sentAfterResume.isDisjoint(with: verdict.othersAccepted), "seed \(seed)")
        #expect(sentAfterResume.isDisjoint(with: midSend.union(sentBeforePause)), "seed \(seed)")
        // Its late outcomes changed nothing: what it held ended delivered (or dropped for a later
        // alert of its bid), none failed, none left; a repeat only where a delivery was in doubt.
        verdict.expectThePromise(inDoubtAt: [inDoubtAtPause], "paused instance test, seed \(seed)")
        try await Verdict.expectFollowedOneAtATime(harness, "paused instance test (seed \(seed))")
        try await own.shutdown()
        try await harness.shutdown()
    }

    /// A second fake APNs for one instance, trusting the harness's key: its description
    /// (`fake-apns.json`) in a directory of its own; `host`: the address it listens on.
    static func fakeOfItsOwn(
        _ harness: Harness, host: String = "127.0.0.1"
    ) async throws -> (server: FakeProviderServer, directory: String) {
        let directory = (harness.directory as NSString).appendingPathComponent("own-apns")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let keyPath = (harness.directory as NSString).appendingPathComponent("key.p8")
        let key = try P256.Signing.PrivateKey(pemRepresentation: String(contentsOfFile: keyPath, encoding: .utf8))
        let server = try await FakeProviderServer.start(
            host: host,
            configuration: FakeProviderConfiguration(
                verificationKey: key.publicKey, keyID: "CRASHKEY01", teamID: "CRASHTEAM1"))
        let caPath = (directory as NSString).appendingPathComponent("ca.pem")
        try Data(server.authority.caCertificatePEM.utf8).write(to: URL(fileURLWithPath: caPath))
        let description = [
            "url": server.baseURL, "ca": caPath, "key": keyPath, "key_id": "CRASHKEY01", "team_id": "CRASHTEAM1",
        ]
        try JSONSerialization.data(withJSONObject: description).write(
            to: URL(fileURLWithPath: (directory as NSString).appendingPathComponent("fake-apns.json")))
        return (server, directory)
    }
}
