import Alerts
import Crypto
import FakeProviders
import Foundation
import Pipeline
import Retrosheet
import Storage
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `nohit replay` killed during delivery and started again, as an operator's process would be,
/// against a fake APNs in this process that keeps a ledger of every `apns-id` it accepted.
@Suite(.serialized, .ownThreads) struct CrashRecoveryTests {
    static let day = "2020-08-25"

    /// A fake APNs, a database of seeded devices, and what the pipeline should deliver to them.
    final class Harness: Sendable {
        let directory: String
        let server: FakeProviderServer
        let database: String
        let day: String

        /// `database`: an SQLite file in the harness's directory by default, or a PostgreSQL URL.
        init(devices: [[String]], day: String = CrashRecoveryTests.day, database: String? = nil) async throws {
            self.day = day
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("crash-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            self.database = database ?? (directory as NSString).appendingPathComponent("nohit.sqlite")
            let key = P256.Signing.PrivateKey()
            server = try await FakeProviderServer.start(
                configuration: FakeProviderConfiguration(
                    verificationKey: key.publicKey, keyID: "CRASHKEY01", teamID: "CRASHTEAM1"))
            let keyPath = (directory as NSString).appendingPathComponent("key.p8")
            let caPath = (directory as NSString).appendingPathComponent("ca.pem")
            try Data(key.pemRepresentation.utf8).write(to: URL(fileURLWithPath: keyPath))
            try Data(server.authority.caCertificatePEM.utf8).write(to: URL(fileURLWithPath: caPath))
            let description: [String: String] = [
                "url": server.baseURL, "ca": caPath, "key": keyPath, "key_id": "CRASHKEY01", "team_id": "CRASHTEAM1",
            ]
            try JSONSerialization.data(withJSONObject: description).write(
                to: URL(fileURLWithPath: (directory as NSString).appendingPathComponent("fake-apns.json")))
            for arguments in devices {
                let seeded = try Executable.run(
                    "nohit", ["devices", "seed", "--database", self.database, "--data-dir", directory] + arguments)
                #expect(seeded.status == 0, "\(seeded.standardError)")
            }
        }

        /// Every delivery id the day should produce for the registered devices, from the pure
        /// parts alone: the engine's moments in order (score alerts included), and the planner with
        /// the devices following each bid.
        func expectedDeliveries() async throws -> Set<String> {
            try Self.expectedDeliveries(devices: try await SQLiteStore(path: database).activeDevices(), day: day)
        }

        /// The same for `devices` (read from any store).
        static func expectedDeliveries(devices: [Device], day: String) throws -> Set<String> {
            let games = try ReplaySchedule.games(on: day, data: [TestData.path("retrosheet")])
            var followers: [String: Set<UUID>] = [:]
            var expected = Set<String>()
            for (moment, game, time) in ReplayTimeline(games: games).moments(scoreAlerts: true) {
                for device in devices {
                    let past = DeviceBidHistory(progressSent: followers[moment.bidKey]?.contains(device.id) == true)
                    guard
                        case .send = Planner.decide(
                            moment, teams: [game.away.code, game.home.code], at: time, device: device, history: past)
                    else { continue }
                    if moment.kind.isProgress { followers[moment.bidKey, default: []].insert(device.id) }
                    expected.insert(UUID.delivery(momentID: moment.id, deviceID: device.id).uuidString.lowercased())
                }
            }
            return expected
        }

        /// Starts `nohit replay` for the day as fast as possible.
        func startReplay() throws -> (process: Process, log: String) {
            let log = (directory as NSString).appendingPathComponent("replay-\(UUID().uuidString).log")
            _ = FileManager.default.createFile(atPath: log, contents: nil)
            let process = Process()
            process.executableURL = Executable.productsDirectory.appendingPathComponent("nohit")
            process.arguments = [
                "replay", "--date", day, "--speed", "0", "--data", TestData.path("retrosheet"),
                "--database", database, "--data-dir", directory, "--fake-apns", directory, "--quiet",
                "--concurrency", "16",
            ]
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
            process.standardOutput = handle
            process.standardError = handle
            try process.run()
            return (process, log)
        }

        /// Delivery ids the database holds as being sent (in doubt, were the process to die now).
        func inDoubt() async throws -> Set<String> {
            let rows = try await SQLiteStore(path: database).outboxRows()
            return Set(rows.filter { $0.state == 1 }.map { $0.id.uuidString.lowercased() })
        }

        func superseded() async throws -> Set<String> {
            let rows = try await SQLiteStore(path: database).outboxRows()
            return Set(rows.filter { $0.state == 4 }.map { $0.id.uuidString.lowercased() })
        }

        func shutdown() async throws {
            try await server.shutdown()
            try? FileManager.default.removeItem(atPath: directory)
        }
    }

    /// Waits until the fake has accepted `count` alerts, or the process ends.
    static func waitForAccepted(_ count: Int, server: FakeProviderServer, process: Process) async throws {
        while server.state.uniqueAcceptedCount < count && process.isRunning {
            try await Task.sleep(for: .milliseconds(2))
        }
    }

    static func log(_ path: String) -> String {
        (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    }

    @Test func killedAtRandomPointsDuringDeliveryEveryAlertArrivesAndOnlyInDoubtOnesRepeat() async throws {
        // 10,000 devices: most want one alert per bid, a tenth a mix of preferences, and some
        // whose first attempts fail (429, 503) so retries are pending when the process dies.
        let harness = try await Harness(devices: [
            ["--count", "8800", "--frequency", "once-per-bid", "--seed", "1"],
            ["--count", "1000", "--mix", "--seed", "2"],
            ["--count", "100", "--frequency", "once-per-bid", "--token-prefix", "503", "--seed", "3"],
            ["--count", "100", "--frequency", "once-per-bid", "--token-prefix", "429", "--seed", "4"],
        ])
        let expected = try await harness.expectedDeliveries()
        #expect(expected.count > 20_000)

        var generator = SystemRandomNumberGenerator()
        var inDoubtAtKills = Set<String>()
        var kills: [(at: Int, inDoubt: Int)] = []
        for _ in 0..<4 {
            let before = harness.server.state.uniqueAcceptedCount
            let remaining = expected.count - before
            let target = before + Int.random(in: remaining / 20...remaining / 4, using: &generator)
            let (process, log) = try harness.startReplay()
            try await Self.waitForAccepted(target, server: harness.server, process: process)
            try #require(process.isRunning, "replay ended before it could be killed: \(Self.log(log))")
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            #expect(process.terminationReason == .uncaughtSignal)
            let doubt = try await harness.inDoubt()
            inDoubtAtKills.formUnion(doubt)
            kills.append((harness.server.state.uniqueAcceptedCount, doubt.count))
        }
        // Delivery was really under way at every kill.
        #expect(kills.allSatisfy { $0.at > 0 && $0.at < expected.count })

        let (process, log) = try harness.startReplay()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(Self.log(log))")

        let accepted = harness.server.state.accepted
        let acceptedIDs = Set(accepted.map(\.apnsID))
        let superseded = try await harness.superseded()
        let missing = expected.subtracting(acceptedIDs).subtracting(superseded)
        let unexpected = acceptedIDs.subtracting(expected)
        let repeated = Set(accepted.filter { $0.count > 1 }.map(\.apnsID))
        print(
            "crash test: \(expected.count) expected alerts to 10,000 devices, \(kills.count) kills "
                + "(accepted so far, in doubt): \(kills.map { "(\($0.at), \($0.inDoubt))" }.joined(separator: " ")); "
                + "missing \(missing.count), unexpected \(unexpected.count), superseded \(superseded.count), "
                + "accepted twice \(repeated.count) (all in doubt at a kill: \(repeated.isSubset(of: inDoubtAtKills)))")
        #expect(missing.isEmpty)
        #expect(unexpected.isEmpty)
        // An alert acknowledged before a kill but not yet recorded is in doubt; only those are
        // sent again (same apns-id and collapse id), never one whose acknowledgement was stored.
        #expect(repeated.isSubset(of: inDoubtAtKills))
        #expect(accepted.allSatisfy { $0.count <= 1 + kills.count })
        // Superseded alerts were replaced on the device by a later one of the same bid.
        #expect(superseded.isSubset(of: inDoubtAtKills))
        // Running the day again sends nothing.
        let requests = harness.server.state.requestCount
        let (again, againLog) = try harness.startReplay()
        again.waitUntilExit()
        #expect(again.terminationStatus == 0, "\(Self.log(againLog))")
        #expect(harness.server.state.requestCount == requests)
        try await harness.shutdown()
    }

    @Test func stoppedGracefullyMidDeliveryNothingIsLostOrRepeated() async throws {
        let harness = try await Harness(devices: [["--count", "1000", "--mix", "--seed", "5"]])
        let expected = try await harness.expectedDeliveries()
        for _ in 0..<3 {
            let before = harness.server.state.uniqueAcceptedCount
            let (process, log) = try harness.startReplay()
            try await Self.waitForAccepted(
                before + (expected.count - before) / 3, server: harness.server, process: process)
            try #require(process.isRunning, "replay ended before it could be stopped: \(Self.log(log))")
            kill(process.processIdentifier, SIGTERM)
            process.waitUntilExit()
            #expect(process.terminationStatus == 128 + SIGTERM, "\(Self.log(log))")
            // A graceful stop leaves nothing in doubt.
            #expect(try await harness.inDoubt().isEmpty)
        }
        let (process, log) = try harness.startReplay()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(Self.log(log))")
        let accepted = harness.server.state.accepted
        #expect(Set(accepted.map(\.apnsID)) == expected)
        #expect(accepted.allSatisfy { $0.count == 1 })
        try await harness.shutdown()
    }

    /// 2020-08-23: the Nationals beat the Marlins 9-3, so Papa John's half price is on the 24th.
    /// 1,500 of 2,000 devices subscribe; `nohit replay` is killed (SIGKILL) at random points while
    /// it delivers, then run to the end: every subscriber gets the deal alert once (a repeat only
    /// where it was in doubt at a kill, with the same apns-id), nobody else gets it, and every
    /// other alert of the day arrives as planned.
    @Test func aDealAlertReachesEverySubscriberOnceAcrossKills() async throws {
        let harness = try await Harness(
            devices: [
                ["--count", "1500", "--frequency", "once-per-bid", "--deal", "papa-johns-dc-nationals", "--seed", "7"],
                ["--count", "500", "--frequency", "once-per-bid", "--seed", "8"],
            ], day: "2020-08-23")
        let devices = try await SQLiteStore(path: harness.database).activeDevices()
        let subscribers = devices.filter { $0.preferences.deals == ["papa-johns-dc-nationals"] }
        #expect(subscribers.count == 1500)
        // The deal's moment: one per rule, version and deal day.
        let dealMoment = "deal-papa-johns-dc-nationals-v2-2020-08-24"
        let dealDeliveries = Set(
            subscribers.map { UUID.delivery(momentID: dealMoment, deviceID: $0.id).uuidString.lowercased() })
        let expected = try await harness.expectedDeliveries().union(dealDeliveries)

        let seed = TestSeed.draw()
        print("deal crash test: kill points drawn with seed \(seed)")
        var generator = SplitMix(seed: seed)
        var inDoubtAtKills = Set<String>()
        var kills: [(at: Int, inDoubt: Int)] = []
        for _ in 0..<3 {
            let before = harness.server.state.uniqueAcceptedCount
            let remaining = expected.count - before
            guard remaining > 40 else { break }
            let target = before + Int.random(in: remaining / 10...remaining / 2, using: &generator)
            let (process, log) = try harness.startReplay()
            try await Self.waitForAccepted(target, server: harness.server, process: process)
            try #require(process.isRunning, "replay ended before it could be killed (seed \(seed)): \(Self.log(log))")
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            let doubt = try await harness.inDoubt()
            inDoubtAtKills.formUnion(doubt)
            kills.append((harness.server.state.uniqueAcceptedCount, doubt.count))
        }
        let (process, log) = try harness.startReplay()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(Self.log(log))")
        let accepted = harness.server.state.accepted
        let acceptedIDs = Set(accepted.map(\.apnsID))
        let superseded = try await harness.superseded()
        let repeated = Set(accepted.filter { $0.count > 1 }.map(\.apnsID))
        print(
            "deal crash test (seed \(seed)): \(expected.count) expected alerts (\(dealDeliveries.count) deal alerts), "
                + "kills at \(kills.map { "(\($0.at), \($0.inDoubt) in doubt)" }.joined(separator: " ")); "
                + "deal alerts accepted \(acceptedIDs.intersection(dealDeliveries).count), "
                + "accepted twice \(repeated.count)")
        #expect(dealDeliveries.isSubset(of: acceptedIDs), "seed \(seed)")
        #expect(expected.subtracting(acceptedIDs).subtracting(superseded).isEmpty, "seed \(seed)")
        #expect(acceptedIDs.subtracting(expected).isEmpty, "seed \(seed)")
        #expect(repeated.isSubset(of: inDoubtAtKills), "seed \(seed)")
        // The deal's alerts carry the reward and the window, collapse by rule.
        let first = try #require(accepted.first { dealDeliveries.contains($0.apnsID) })
        let deal = try #require(harness.server.state.notification(apnsID: first.apnsID))
        #expect(deal.collapseID == "deal-papa-johns-dc-nationals")
        let payload = String(decoding: deal.payload, as: UTF8.self)
        #expect(payload.contains("Papa John's (DC area): 50% off regular-price pizzas ordered online"), "\(payload)")
        #expect(payload.contains("Monday, Aug 24, all day (America/New_York)"), "\(payload)")
        // Running the day again sends nothing.
        let requests = harness.server.state.requestCount
        let (again, againLog) = try harness.startReplay()
        again.waitUntilExit()
        #expect(again.terminationStatus == 0, "\(Self.log(againLog))")
        #expect(harness.server.state.requestCount == requests)
        try await harness.shutdown()
    }
}
