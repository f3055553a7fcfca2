import FakeProviders
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A day of faults under three `nohit replay` instances sharing one PostgreSQL database (issue 57,
/// item 1), in an order drawn from a printed seed, spread over the day's fan-outs:
/// - **severed**: one instance runs in a network namespace of the test's making, joined to this host
///   by two links: one to the database (a cluster of the test's own, listening there too) and one
///   to a fake APNs of its own, so every request is known by its sender. The database's link is
///   taken down — no reset, no error: packets stop, as when a cable or a switch goes — for 45–60 s
///   (eleven to fifteen leases) while the instance has requests held unanswered by its fake, then up.
///   Cut off, it sends only what it had claimed (until their send-by time); back, it sends nothing
///   the others took over;
/// - **crashed**: PostgreSQL stopped as a crash (`pg_ctl stop -m immediate`) and kept down 30–60 s,
///   then started: no instance exits or grows without bound meanwhile, and each goes on by itself;
/// - **stalled**: every process of the cluster stopped (SIGSTOP) for 20 s: connections stay open
///   and nothing answers;
/// - **paused**: the instance apart stopped (SIGSTOP) past its lease mid-send, its requests
///   answered while it is stopped, then let go on: it sends nothing the others took over (as
///   PausedInstanceTests, which pauses one alone).
/// The database's faults and the pause come first, in a drawn order, and the sever last. At the
/// end, every alert arrived, a repeat only for what was in flight at a fault, and every game was
/// followed by one instance at a time. `Benchmarks/run faults` runs this day at 10,000 devices with
/// release builds of the instances (``FaultDaySize``). The test's day has the database's faults
/// only unless `NOHIT_TEST_FAULT_DAY_APART=1` (``FaultDaySize/faultsApart``; at 100 times real
/// speed then, see ``FaultDaySize/speed``). (Twice, before statements had a deadline, an
/// instance cut off did not end after the link came back: SilentLinkTests.)
extension InstancesTests {
    enum Fault: String, CaseIterable { case severed, crashed, stalled, paused }

    @Test func aDayOfFaultsLosesNothing() async throws {
        let ip = "/usr/sbin/ip"
        let size = try FaultDaySize.fromEnvironment
        if let missing = PostgresCluster.unavailable ?? (FileManager.default.isExecutableFile(atPath: ip) ? nil : ip) {
            // The benchmark (`Benchmarks/run faults`) asked for it: a skip would say nothing.
            try #require(!size.isBenchmark, "the fault day needs \(missing)")
            print("FaultDayTests skipped: needs \(missing) (CI has it)")
            return
        }
        let seed = TestSeed.draw()
        print("fault day test: faults' order, points and lengths drawn with seed \(seed)")
        var random = SplitMix(seed: seed)
        // A number of its own (not drawn from the seed: a run beside this one must not share it).
        let net = try Namespace(number: Int.random(in: 1...250))
        defer { net.remove() }
        let cluster = try PostgresCluster(listen: ["127.0.0.1", net.database], trusting: [net.databaseNetwork])
        defer { cluster.remove() }
        let harness = try await Harness(
            devices: [
                ["--count", "\(size.devices - size.devices / 5)", "--frequency", "once-per-bid", "--seed", "5"],
                ["--count", "\(size.devices / 5)", "--mix", "--seed", "6"],
            ], url: cluster.url(), nohit: size.nohit)
        let ownFake = try await Self.fakeOfItsOwn(harness, host: net.provider)
        defer {
            Task {
                try? await ownFake.server.shutdown()
                try? await harness.shutdown()
            }
        }
        let devices = try await harness.store { try await $0.activeDevices() }
        let expected = try CrashRecoveryTests.Harness.expectedDeliveries(devices: devices, day: Self.day)

        let (speed, lease, staleAfterMinutes) = (size.speed, 4, 1440)
        // Broadcasts off: a channel made through one fake would be unknown to the other.
        let off = ["NOHIT_APNS_BROADCAST": "false"]
        let apart = try harness.startReplay(
            instance: "apart", speed: speed, leaseSeconds: lease, staleAfterMinutes: staleAfterMinutes,
            fakeAPNs: ownFake.directory, environment: off, database: cluster.url(host: net.database),
            namespace: net.name)
        var running = [(id: "apart", process: apart.process, log: apart.log)]
        defer {
            _ = try? cluster.run("resume")
            for instance in running where instance.process.isRunning {
                kill(instance.process.processIdentifier, SIGKILL)
            }
        }
        for id in ["i1", "i2"] {
            let started = try harness.startReplay(
                instance: id, speed: speed, leaseSeconds: lease, staleAfterMinutes: staleAfterMinutes,
                environment: off)
            running.append((id, started.process, started.log))
        }
        let day = Day(
            harness: harness, own: ownFake.server, others: harness.crash.server, cluster: cluster, net: net,
            processes: running.map { ($0.id, $0.process) }, lease: lease)
        let figures = FaultDayFigures(processes: running.map { ($0.id, $0.process) })
        defer { figures.stop() }
        let began = ContinuousClock.now

        // Each fault at a point drawn in its part of the day: 10-18 %, 28-36 %, 46-54 % (and 64-72 %)
        // of the alerts.
        var inDoubt: [Fault: Set<String>] = [:]
        var severed: Severed?
        var paused: Paused?
        var afterPause: [String: Int]?
        var said: [String] = []
        var reached = 0
        var takenAtTheCut = false
        // The database's faults and the pause first, in a drawn order, then the sever: while one
        // instance is cut off the others go on at full pace, and would take the rest of the day's
        // alerts with them.
        let order =
            ([Fault.crashed, .stalled] + (size.faultsApart ? [.paused] : [])).shuffled(using: &random)
            + (size.faultsApart ? [.severed] : [])
        for (index, fault) in order.enumerated() {
            let share = 0.1 + 0.18 * Double(index) + Double.random(in: 0..<0.08, using: &random)
            let target = Int(Double(expected.count) * share)
            while day.accepted() < target && running.allSatisfy(\.process.isRunning) {
                try await Task.sleep(for: .milliseconds(2))
            }
            if day.accepted() >= target { reached += 1 }
            // The pause's window ends where the next fault begins (the sever comes after it).
            if paused != nil && afterPause == nil { afterPause = day.ownAcceptances() }
            switch fault {
            case .severed:
                let cut = try await day.sever(for: .seconds(45 + Int.random(in: 0...15, using: &random)))
                (inDoubt[fault], severed) = (cut.inDoubt, cut)
                takenAtTheCut = true
                said.append(cut.said)
            case .paused:
                let pause = try await day.pause()
                (inDoubt[fault], paused) = (pause.inDoubt, pause)
                said.append(pause.said)
            case .crashed, .stalled:
                let length =
                    fault == .crashed ? Duration.seconds(30 + Int.random(in: 0...30, using: &random)) : .seconds(20)
                let (doubt, line) = try await day.stop(fault, for: length)
                inDoubt[fault] = doubt
                said.append(line)
            }
        }
        let label = "fault day test, seed \(seed)"
        #expect(reached == order.count, "an instance ended before the day's \(order.count) faults (\(label))")

        do {
            _ = try await ServedDay.eventually("the day's end in every instance", within: 1200) {
                running.allSatisfy { !$0.process.isRunning } ? true : nil
            }
        } catch {
            for instance in running where instance.process.isRunning {
                print("fault day test: \(instance.id) still running:")
                print(CrashRecoveryTests.log(instance.log).suffix(3000))
            }
            throw error
        }
        let wall = ContinuousClock.now - began
        figures.stop()
        for instance in running where instance.process.terminationStatus != 0 {
            print("fault day test: \(instance.id) ended with \(instance.process.terminationStatus):")
            print(CrashRecoveryTests.log(instance.log).suffix(4000))
        }
        #expect(running.allSatisfy { $0.process.terminationStatus == 0 }, "\(label)")

        let verdict = try await Verdict(
            harness: harness, own: day.own, others: day.others, expected: expected,
            // Without faults of its own, what is taken back from it lapsed as from the others (its
            // leases ran out on a loaded machine, or while the database was away).
            apart: size.faultsApart ? "apart" : nil)
        // A row taken back from the instance cut off was one it held when its lease lapsed: in
        // doubt at the cut (or at a fault of the database before, where it is in doubt already).
        let inDoubtAsSeen = inDoubt
        // (Rows taken back from it at the pause are that fault's doubt already.)
        if takenAtTheCut {
            inDoubt[.severed, default: []].formUnion(verdict.takenFromApart.subtracting(inDoubtAsSeen[.paused] ?? []))
        }
        let allInDoubt = inDoubt.values.reduce(into: Set<String>()) { $0.formUnion($1) }
        print(
            "fault day test (seed \(seed)): \(expected.count) expected alerts to \(size.devices) devices; "
                + said.joined(separator: "; ") + "; missing \(verdict.missing.count), unexpected "
                + "\(verdict.unexpected.count), superseded \(verdict.superseded.count), accepted twice "
                + "\(verdict.repeated.count) (all in doubt at a fault: \(verdict.repeated.isSubset(of: allInDoubt))); "
                + "taken back from the one cut off \(verdict.takenFromApart.count), from others "
                + "\(verdict.lapsed.count); given up on while held \(verdict.gaveUp.count)")
        if let severed {
            // Cut off, it claimed nothing: what it sent then it had claimed before, and it stopped
            // at their send-by time (half a lease past their last renewal; the bound leaves a loaded
            // machine room, the fake's acceptance trailing the instance's write).
            #expect(severed.sentDuringCut.isSubset(of: inDoubt[.severed] ?? []), "\(label)")
            #expect(severed.lastSend < .seconds(3 * lease), "\(label)")
            #expect(!severed.held.isEmpty, "cut off with no request held (\(label))")
            // Back, it sent nothing the others sent, nor anything again that it had sent (the
            // sever is the day's last fault).
            let sentAfterMend = day.sentSince(severed.ownAtMend)
            #expect(sentAfterMend.isDisjoint(with: verdict.othersAccepted), "\(label)")
            #expect(sentAfterMend.isDisjoint(with: severed.ownAtMend.keys), "\(label)")
        }
        if let paused, let afterPause {
            // Going on, until the next fault, it sent nothing again that it had sent before the
            // pause, and nothing the others sent: apart from what a later fault left in doubt (the
            // others may send that again after it; as seen at the fault, not what was taken back
            // from it, which is what it must not send).
            let inDoubtLater = inDoubtAsSeen.filter { $0.key != .paused }.values.reduce(into: Set<String>()) {
                $0.formUnion($1)
            }
            let sentAfterResume = Set(
                afterPause.filter { $0.value > paused.ownAtResume[$0.key, default: 0] }.map(\.key))
            #expect(sentAfterResume.isDisjoint(with: paused.ownAtResume.keys), "\(label)")
            #expect(sentAfterResume.subtracting(inDoubtLater).isDisjoint(with: verdict.othersAccepted), "\(label)")
            #expect(!paused.held.isEmpty, "paused with no request held (\(label))")
            print("\(label): after the pause, until the next fault, it sent \(sentAfterResume.count)")
        }
        for (id, count) in verdict.counts where count > 2 {
            let at = inDoubt.filter { $0.value.contains(id) }.map(\.key.rawValue).sorted()
            print("fault day test (seed \(seed)): \(id) accepted \(count) times, in doubt at \(at)")
        }
        let repeats = try FaultDayRepeats(
            counts: verdict.counts, own: day.own.state, others: day.others.state, inDoubt: inDoubt, seed: seed)
        print("\(label): every delivery accepted more than once, with its ids: \(repeats.path)")
        #expect(
            repeats.differed.isEmpty,
            "accepted again for another device or with another collapse id: \(repeats.differed.prefix(5)) (\(label))")
        print(figures.said(alerts: expected.count, wall: wall, size: size, label: label))
        verdict.expectThePromise(inDoubtAt: Array(inDoubt.values), label)
        try await Verdict.expectFollowedOneAtATime(harness, "fault day test (seed \(seed))")
    }

    /// What the sever found.
    struct Severed {
        /// What it had claimed, and the requests its fake held, at the cut.
        let inDoubt: Set<String>
        let held: Set<String>
        let sentDuringCut: Set<String>
        /// Its fake's acceptances when the link was mended.
        let ownAtMend: [String: Int]
        /// When it last sent, from the cut.
        let lastSend: Duration
        let said: String
    }

    /// What the pause found.
    struct Paused {
        /// What it had claimed, and the requests its fake held, at the pause.
        let inDoubt: Set<String>
        let held: Set<String>
        /// Its fake's acceptances when it went on.
        let ownAtResume: [String: Int]
        let said: String
    }

    /// The day's instances and what the faults act on.
    struct Day {
        let harness: Harness
        /// The fake of the instance apart (in the namespace), and the others'.
        let own: FakeProviderServer
        let others: FakeProviderServer
        let cluster: PostgresCluster
        let net: Namespace
        let processes: [(id: String, process: Process)]
        let lease: Int

        func allRunning() -> Bool { processes.allSatisfy { $0.process.isRunning } }

        /// No instance failed: each still running, or ended with its day done (status 0). A fault
        /// drawn late in a loaded run can outlast the others' day: their last alerts sent, they end.
        func noneFailed() -> Bool {
            processes.allSatisfy { $0.process.isRunning || $0.process.terminationStatus == 0 }
        }

        func accepted() -> Int { own.state.uniqueAcceptedCount + others.state.uniqueAcceptedCount }

        /// Every request the fakes accepted, repeats too.
        func requestsAccepted() -> Int { own.state.acceptedCounts.total + others.state.acceptedCounts.total }

        func ownAcceptances() -> [String: Int] {
            Dictionary(own.state.accepted.map { ($0.apnsID, $0.count) }, uniquingKeysWith: +)
        }

        /// The instance apart's sends since `before` (its fake's acceptances then).
        func sentSince(_ before: [String: Int]) -> Set<String> {
            Set(own.state.accepted.filter { $0.count > before[$0.apnsID, default: 0] }.map(\.apnsID))
        }

        /// Rows claimed and not finished, by any instance, as the database has them.
        func inFlight(_ instance: String? = nil) async throws -> Set<String> {
            let byInstance = try await harness.store { try await $0.inFlightByInstance() }
            let rows =
                instance.map { byInstance[$0, default: []] } ?? byInstance.values.reduce(into: []) { $0.formUnion($1) }
            return Set(rows.map { $0.uuidString.lowercased() })
        }

        /// The database's link taken down once the instance apart has requests held unanswered (a
        /// burst of them, or one and 100 ms), the held ones answered while it is cut off, and the
        /// link mended after `length`.
        func sever(for length: Duration) async throws -> Severed {
            try await Self.holdUntilSending(own)
            // What it had claimed, read through loopback before the cut and after it (only its link
            // is down): on a loaded machine its leases can lapse, and the others take its rows
            // back, before the read after the cut is answered (see the rows taken from it, below).
            let claimedBefore = try await inFlight("apart")
            try net.run("cut")
            let cutAt = ContinuousClock.now
            let held = Set(own.state.heldAPNsIDs)
            let ownBeforeCut = ownAcceptances()
            let claimed = try await inFlight("apart").union(claimedBefore)
            // The answers go back to it over its provider's link: their outcomes cannot be written.
            own.state.release()
            var lastSend = cutAt
            var sends = own.state.acceptedCounts.total
            let othersAtCut = others.state.uniqueAcceptedCount
            // 40 s into the cut: the sessions the server still holds of it (its keepalives and
            // `tcp_user_timeout`, set by the store, end those it cannot reach).
            var sessions: String?
            while ContinuousClock.now - cutAt < length {
                let now = own.state.acceptedCounts.total
                if now > sends { (sends, lastSend) = (now, .now) }
                if sessions == nil, ContinuousClock.now - cutAt > .seconds(40) {
                    sessions = try cluster.run(
                        "sql", "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'nohit apart'"
                    )
                    .trimmingCharacters(in: .whitespacesAndNewlines)
                }
                try await Task.sleep(for: .milliseconds(50))
            }
            // What the server still holds of it, said rather than required: idle sessions were
            // ended by then in the runs seen, but sessions blocked behind a lock at the cut sent
            // their lock timeout's error (30 s) and were still retransmitting it.
            if sessions != "0" {
                let left = try cluster.run(
                    "sql",
                    "SELECT pid, state, wait_event, state_change, left(query, 60) FROM pg_stat_activity "
                        + "WHERE application_name = 'nohit apart'")
                print("fault day test: sessions of the instance cut off, 40 s into the cut:\n\(left)")
            }
            let ownAtMend = ownAcceptances()
            let sentDuringCut = Set(
                ownAtMend.filter { $0.value > ownBeforeCut[$0.key, default: 0] }.map(\.key))
            try net.run("mend")
            #expect(noneFailed(), "an instance failed while one was cut off")
            return Severed(
                inDoubt: claimed.union(held), held: held, sentDuringCut: sentDuringCut, ownAtMend: ownAtMend,
                lastSend: lastSend - cutAt,
                said: "severed at \(ownBeforeCut.count) of its own sends for \(length), with \(claimed.count) "
                    + "claimed and \(held.count) held (answered while it was cut off): it sent "
                    + "\(sentDuringCut.count) while cut off, the last \(lastSend - cutAt) after the cut (lease "
                    + "\(lease) s), all claimed before: \(sentDuringCut.isSubset(of: claimed.union(held))); the "
                    + "others sent \(others.state.uniqueAcceptedCount - othersAtCut) meanwhile; 40 s into the cut "
                    + "the server held \(sessions ?? "?") sessions of it")
        }

        /// The instance apart paused (SIGSTOP) once it has requests held unanswered by its fake, at
        /// each of three points at once (deliveries claimed and not sent, requests sent, answers
        /// given while it is stopped), for three leases or until the others have taken back every
        /// delivery it held (a minute at most), then let go on (PausedInstanceTests has the same
        /// pause alone).
        func pause() async throws -> Paused {
            try await Self.holdUntilSending(own)
            let process = try #require(processes.first { $0.id == "apart" }?.process)
            let claimedBefore = try await inFlight("apart")
            kill(process.processIdentifier, SIGSTOP)
            let pausedAt = ContinuousClock.now
            let held = Set(own.state.heldAPNsIDs)
            let ownAtPause = ownAcceptances()
            let claimed = try await inFlight("apart").union(claimedBefore)
            own.state.release()
            while ContinuousClock.now - pausedAt < .seconds(3 * lease) {
                try await Task.sleep(for: .milliseconds(50))
            }
            while ContinuousClock.now - pausedAt < .seconds(60), !(try await inFlight("apart").isEmpty) {
                try await Task.sleep(for: .milliseconds(200))
            }
            let pausedFor = ContinuousClock.now - pausedAt
            let ownAtResume = ownAcceptances()
            kill(process.processIdentifier, SIGCONT)
            #expect(noneFailed(), "an instance failed while one was paused")
            return Paused(
                inDoubt: claimed.union(held), held: held, ownAtResume: ownAtResume,
                said: "paused at \(ownAtPause.count) of its own sends for \(pausedFor), with \(claimed.count) "
                    + "claimed and \(held.count) held (answered while it was stopped)")
        }

        /// PostgreSQL crashed (and down for `length`) or stalled for `length`: every instance still
        /// running throughout, its memory bounded; what was in flight as the database has it once
        /// back (nothing can be claimed while it is away, and a row finished is no longer so).
        func stop(_ fault: Fault, for length: Duration) async throws -> (Set<String>, String) {
            let before = processes.map { Self.residentBytes($0.process.processIdentifier) }
            // Mid-send: requests held unanswered, answered once the server is away.
            try await Self.holdUntilSending(others)
            let at = accepted()
            // In flight as the fault begins, and (below) as the server is back: a row taken back and
            // finished between the two is in the first.
            let inFlightBefore = try await inFlight()
            try cluster.run(fault == .crashed ? "crash" : "stall")
            let held = Set(others.state.heldAPNsIDs)
            others.state.release()
            let stopped = ContinuousClock.now
            var most = before
            while ContinuousClock.now - stopped < length {
                #expect(allRunning(), "an instance ended while PostgreSQL was \(fault)")
                for (index, entry) in processes.enumerated() {
                    most[index] = max(most[index], Self.residentBytes(entry.process.processIdentifier))
                }
                try await Task.sleep(for: .milliseconds(500))
            }
            try cluster.run(fault == .crashed ? "start" : "resume")
            let back = ContinuousClock.now
            let (sentAtBack, requestsAtBack) = (accepted(), requestsAccepted())
            let inDoubt = try await inFlight().union(inFlightBefore).union(held)
            // The first request accepted after it was back (any instance's; two minutes at most).
            while requestsAccepted() == requestsAtBack,
                ContinuousClock.now - back < .seconds(120), allRunning()
            {
                try await Task.sleep(for: .milliseconds(20))
            }
            let wentOn = ContinuousClock.now - back
            let growth = zip(before, most).map { $1 - $0 }.max() ?? 0
            #expect(growth < 256 << 20, "an instance grew by \(growth >> 20) MB while PostgreSQL was \(fault)")
            return (
                inDoubt,
                "PostgreSQL \(fault) at \(at) alerts for \(length), \(held.count) requests held: \(inDoubt.count) deliveries in flight; "
                    + "the instances' memory grew \(growth >> 20) MB at most meanwhile; back, the first request "
                    + "accepted after \(wentOn) (\(sentAtBack) alerts then)"
            )
        }

        /// Holds `fake`'s requests unanswered until some are held (a burst of them, or one and
        /// 100 ms; two minutes at most).
        static func holdUntilSending(_ fake: FakeProviderServer) async throws {
            fake.state.hold()
            var firstHeld: ContinuousClock.Instant?
            let holding = ContinuousClock.now
            while ContinuousClock.now - holding < .seconds(120) {
                let held = fake.state.heldAPNsIDs.count
                if held > 0 && firstHeld == nil { firstHeld = .now }
                if held >= 32 || (firstHeld.map { .now - $0 > .milliseconds(100) } ?? false) { break }
                try await Task.sleep(for: .milliseconds(2))
            }
        }

        /// A process's resident memory (VmRSS), 0 once it has ended.
        static func residentBytes(_ pid: Int32) -> Int {
            (FaultDayFigures.kilobytes("VmRSS", pid: pid) ?? 0) * 1024
        }
    }

    /// A network namespace joined to this host by two links (veth pairs): to the database
    /// (`database`, this host's end, 10.57.n.1/30) and to a fake provider (`provider`,
    /// 10.57.n.5/30). `cut` takes the database's link down (at the namespace's end), `mend` brings it up.
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
                # A name in use (another run's, or one a killed run left) is said, not taken over.
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
              # Down at the instance's end: the host's packets to it are dropped on the link, as
              # they would be past a broken switch (down at the host's end, its kernel would fail
              # them at once, no route, and never count a keepalive probe unanswered).
              cut) ip -n "$ns" link set "${db}n" down ;;
              mend) ip -n "$ns" link set "${db}n" up ;;
              down) down ;;
            esac
            """
    }
}
