import FakeProviders
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A link severed between an instance and PostgreSQL mid-send, then mended (issue 57, item 1).
/// The instance runs in a network namespace of the test's making, joined to this host by two
/// links: one to the database (a cluster of the test's own, listening there too) and one to a fake
/// APNs of its own, so every request is known by its sender. The database's link is taken down —
/// no reset, no error: packets stop, as when a cable or a switch goes — for 20–40 s (five to ten
/// leases), while the instance has requests held unanswered by its fake, then up again. The other
/// two instances, on loopback, go on.
///
/// The promise: while cut off, the instance sends only what it had claimed before (and that only
/// until its claims' send-by time), it sends nothing the others took over once the link is back,
/// it goes on by itself to the day's end, and every alert arrives, a repeat only for what was in
/// flight at the cut.
extension InstancesTests {
    @Test func anInstanceCutOffFromPostgreSQLSendsNothingTakenOverAndGoesOn() async throws {
        let ip = "/usr/sbin/ip"
        if let missing = PostgresCluster.unavailable ?? (FileManager.default.isExecutableFile(atPath: ip) ? nil : ip) {
            print("SeveredLinkTests skipped: needs \(missing) (CI has it)")
            return
        }
        let seed = TestSeed.draw()
        print("severed link test: cut point and length drawn with seed \(seed)")
        var random = SplitMix(seed: seed)
        let net = try Namespace(number: Int(getpid()) % 250 + 1)
        defer { net.remove() }
        let cluster = try PostgresCluster(listen: ["127.0.0.1", net.database], trusting: [net.databaseNetwork])
        defer { cluster.remove() }
        let harness = try await Harness(
            devices: [
                ["--count", "1200", "--frequency", "once-per-bid", "--seed", "5"],
                ["--count", "300", "--mix", "--seed", "6"],
            ], url: cluster.url())
        let ownFake = try await Self.fakeOfItsOwn(harness, host: net.provider)
        let own = ownFake.server
        let others = harness.crash.server
        let devices = try await harness.store { try await $0.activeDevices() }
        let expected = try CrashRecoveryTests.Harness.expectedDeliveries(devices: devices, day: Self.day)

        let (speed, lease, staleAfterMinutes) = (100, 4, 1440)
        // Broadcasts off: a channel made through one fake would be unknown to the other.
        let off = ["NOHIT_APNS_BROADCAST": "false"]
        let cut = try harness.startReplay(
            instance: "cut", speed: speed, leaseSeconds: lease, staleAfterMinutes: staleAfterMinutes,
            fakeAPNs: ownFake.directory, environment: off, database: cluster.url(host: net.database),
            namespace: net.name)
        var running = [(id: "cut", process: cut.process, log: cut.log)]
        for id in ["i1", "i2"] {
            let started = try harness.startReplay(
                instance: id, speed: speed, leaseSeconds: lease, staleAfterMinutes: staleAfterMinutes,
                environment: off)
            running.append((id, started.process, started.log))
        }
        defer {
            for instance in running where instance.process.isRunning {
                kill(instance.process.processIdentifier, SIGKILL)
            }
        }
        func accepted() -> Int { own.state.uniqueAcceptedCount + others.state.uniqueAcceptedCount }

        // The cut: at a point drawn among 20-50 % of the day's alerts, once the instance has
        // requests held unanswered (a burst of them, or one and 100 ms).
        let target = Int(Double(expected.count) * (0.2 + Double.random(in: 0..<0.3, using: &random)))
        let length = Duration.seconds(20 + Int.random(in: 0...20, using: &random))
        while accepted() < target && running.allSatisfy(\.process.isRunning) {
            try await Task.sleep(for: .milliseconds(2))
        }
        own.state.hold()
        var firstHeld: ContinuousClock.Instant?
        let holding = ContinuousClock.now
        while cut.process.isRunning && ContinuousClock.now - holding < .seconds(120) {
            let held = own.state.heldAPNsIDs.count
            if held > 0 && firstHeld == nil { firstHeld = .now }
            if held >= 32 || (firstHeld.map { .now - $0 > .milliseconds(100) } ?? false) { break }
            try await Task.sleep(for: .milliseconds(2))
        }
        try net.run("cut")
        let cutAt = ContinuousClock.now
        let midSend = Set(own.state.heldAPNsIDs)
        let ownBeforeCut = Dictionary(own.state.accepted.map { ($0.apnsID, $0.count) }, uniquingKeysWith: +)
        // What it had claimed, read through loopback (only its link is down).
        let claimed = Set(
            try await harness.store { try await $0.inFlightByInstance() }["cut", default: []]
                .map { $0.uuidString.lowercased() })
        // The answers go back to it over its provider's link: their outcomes cannot be written.
        own.state.release()
        // Cut off for the drawn length; when it last sent, and how far the others got meanwhile.
        var lastSend = cutAt
        var sends = own.state.acceptedCounts.total
        let othersAtCut = others.state.uniqueAcceptedCount
        while ContinuousClock.now - cutAt < length {
            let now = own.state.acceptedCounts.total
            if now > sends { (sends, lastSend) = (now, .now) }
            try await Task.sleep(for: .milliseconds(50))
        }
        let ownAtMend = Dictionary(own.state.accepted.map { ($0.apnsID, $0.count) }, uniquingKeysWith: +)
        let othersDuringCut = others.state.uniqueAcceptedCount - othersAtCut
        try net.run("mend")
        #expect(cut.process.isRunning, "the instance cut off ended: \(CrashRecoveryTests.log(cut.log).suffix(4000))")

        _ = try await ServedDay.eventually("the day's end in every instance", within: 1200) {
            running.allSatisfy { !$0.process.isRunning } ? true : nil
        }
        for instance in running where instance.process.terminationStatus != 0 {
            print("severed link test: \(instance.id) ended with \(instance.process.terminationStatus):")
            print(CrashRecoveryTests.log(instance.log).suffix(4000))
        }
        #expect(running.allSatisfy { $0.process.terminationStatus == 0 }, "seed \(seed)")

        let verdict = try await Verdict(harness: harness, own: own, others: others, expected: expected, apart: "cut")
        let ownAtEnd = own.state.accepted
        let sentDuringCut = Set(
            ownAtEnd.filter { ownAtMend[$0.apnsID, default: 0] > ownBeforeCut[$0.apnsID, default: 0] }
                .map(\.apnsID))
        let sentAfterMend = Set(ownAtEnd.filter { $0.count > ownAtMend[$0.apnsID, default: 0] }.map(\.apnsID))
        let inDoubtAtCut = claimed.union(midSend)
        let label = "severed link test, seed \(seed)"
        print(
            "severed link test (seed \(seed)): \(expected.count) expected alerts to 1,500 devices; its link to "
                + "PostgreSQL cut at \(ownBeforeCut.count) of its own sends, for \(length), with \(claimed.count) "
                + "claimed and \(midSend.count) held unanswered (answered while it was cut off); it sent "
                + "\(sentDuringCut.count) while cut off, the last \(lastSend - cutAt) after the cut (lease \(lease) s), "
                + "all claimed before: \(sentDuringCut.isSubset(of: claimed)); the others sent \(othersDuringCut) "
                + "meanwhile; \(verdict.takenFromApart.count) taken back from it; it sent \(sentAfterMend.count) "
                + "after the link was back, none the others sent: "
                + "\(sentAfterMend.isDisjoint(with: verdict.othersAccepted)); missing \(verdict.missing.count), "
                + "unexpected \(verdict.unexpected.count), superseded \(verdict.superseded.count), accepted twice "
                + "\(verdict.repeated.count) (all in doubt at the cut: \(verdict.repeated.isSubset(of: inDoubtAtCut))); "
                + "lapsed elsewhere \(verdict.lapsed.count), given up on while held \(verdict.gaveUp.count)")
        #expect(!midSend.isEmpty, "cut off with no request held (\(label))")
        // Cut off, it claims nothing: what it sent then it had claimed before, and it stopped at
        // its claims' send-by time (half a lease past their last renewal; the bound here leaves
        // a loaded machine room, the fake's acceptance trailing the instance's write).
        #expect(sentDuringCut.isSubset(of: claimed.union(midSend)), "\(label)")
        #expect(lastSend - cutAt < .seconds(3 * lease), "\(label)")
        // Back, it sends nothing the others sent, nor anything again that it had sent.
        #expect(sentAfterMend.isDisjoint(with: verdict.othersAccepted), "\(label)")
        #expect(sentAfterMend.isDisjoint(with: Set(ownAtMend.keys)), "\(label)")
        verdict.expectThePromise(inDoubt: inDoubtAtCut, label)
        try await Verdict.expectFollowedOneAtATime(harness, "severed link test (seed \(seed))")
        try await own.shutdown()
        try await harness.shutdown()
    }

    /// A network namespace joined to this host by two links (veth pairs): to the database
    /// (`database`, this host's end, 10.57.n.1/30) and to a fake provider (`provider`,
    /// 10.57.n.5/30). `cut` takes the database's link down, `mend` brings it up.
    struct Namespace {
        let name: String
        let number: Int

        var database: String { "10.57.\(number).1" }
        var databaseNetwork: String { "10.57.\(number).0/30" }
        var provider: String { "10.57.\(number).5" }

        init(number: Int) throws {
            self.number = number
            name = "nohit-cut-\(number)"
            try run("up")
        }

        @discardableResult func run(_ what: String) throws -> String {
            let result = try Executable.run("/bin/bash", ["-c", Self.control, "net", what, name, "\(number)"])
            #expect(result.status == 0, "\(what): \(result.standardError)")
            try #require(result.status == 0, "the network namespace's \(what): \(result.standardError)")
            return result.standardOutput
        }

        func remove() { _ = try? run("down") }

        private static let control = """
            set -e
            what="$1"; ns="$2"; n="$3"
            db="nhc${n}d"; ap="nhc${n}a"
            down() {
              ip netns del "$ns" 2>/dev/null || true
              ip link del "$db" 2>/dev/null || true
              ip link del "$ap" 2>/dev/null || true
            }
            case "$what" in
              up)
                down
                ip netns add "$ns"
                ip link add "$db" type veth peer name "${db}n"
                ip link add "$ap" type veth peer name "${ap}n"
                ip link set "${db}n" netns "$ns"
                ip link set "${ap}n" netns "$ns"
                ip addr add "10.57.$n.1/30" dev "$db"
                ip addr add "10.57.$n.5/30" dev "$ap"
                ip link set "$db" up
                ip link set "$ap" up
                ip -n "$ns" addr add "10.57.$n.2/30" dev "${db}n"
                ip -n "$ns" addr add "10.57.$n.6/30" dev "${ap}n"
                ip -n "$ns" link set lo up
                ip -n "$ns" link set "${db}n" up
                ip -n "$ns" link set "${ap}n" up ;;
              cut) ip link set "$db" down ;;
              mend) ip link set "$db" up ;;
              down) down ;;
            esac
            """
    }
}
