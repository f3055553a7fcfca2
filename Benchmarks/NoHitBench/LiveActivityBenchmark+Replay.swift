import Alerts
import ArgumentParser
import AsyncHTTPClient
import Clocks
import Foundation
import Logging
import NIOCore
import Pipeline
import Retrosheet
import ServiceLifecycle
import Storage
import Synchronization

extension LiveActivityBenchmark {
    /// Notes when each state change of a followed bid enters the hub (before its moments are
    /// published), and how long until every delivery then due is acknowledged. A bid is followed
    /// from its first moment past six hitless innings (every device's threshold here), as the
    /// planner follows it for a Live Activity: every later moment of it is a change.
    final class Meter: GameChangeConsumer {
        private struct State {
            var started: ContinuousClock.Instant?
            var followed: Set<String> = []
            var changes = 0
            var latencies: [Double] = []
        }

        private let state = Mutex(State())

        func consume(_ change: GameChange) async throws {
            let now = ContinuousClock.now
            state.withLock { state in
                var counted = false
                for moment in change.moments where moment.kind.isBid {
                    if moment.kind.bidStillAlive && moment.outs >= 18 { state.followed.insert(moment.bidKey) }
                    if state.followed.contains(moment.bidKey) { counted = true }
                }
                if counted {
                    state.changes += 1
                    state.started = now
                }
            }
        }

        /// Every delivery due is acknowledged: the change's time ends here.
        func settled(updated: Bool) {
            let now = ContinuousClock.now
            state.withLock {
                if let started = $0.started, updated { $0.latencies.append((now - started).seconds) }
                $0.started = nil
            }
        }

        var figures: (changes: Int, latencies: [Double]) { state.withLock { ($0.changes, $0.latencies) } }
    }

    /// Replays the day with `devices`, through broadcast channels when `channels` is given; the
    /// activities subscribe on the fake to each bid's channels as they are made (as many per bid
    /// as the per-token path has devices, spread over the buckets).
    func replay(
        devices: [Device], channels clients: BroadcastClients?, providers: ProviderChannels, fake: FakeProcess,
        work: String, name: String, date: String = "2020-08-25"
    ) async throws -> Figures {
        let store = try SQLiteStore(path: (work as NSString).appendingPathComponent("\(name).sqlite"))
        for start in stride(from: 0, to: devices.count, by: 10_000) {
            try await store.register(contentsOf: Array(devices[start..<min(start + 10_000, devices.count)]))
        }
        let games = try ReplaySchedule.games(on: date, data: [data])
        let clock = ManualWallClock(games.map(\.start).min()!.addingTimeInterval(-60))
        let kinds: Set<ChannelKind> = [.apns, .liveActivity, .liveActivityChannel]
        let pipeline = AlertPipeline(
            store: store, channels: providers.channels.filter { kinds.contains($0.kind) }, clock: clock)
        let manager = clients.map {
            BroadcastChannels(
                clients: $0, store: store, directory: pipeline.directory, clock: clock,
                logger: Logger(label: "bench.broadcast", factory: { _ in SwiftLogNoOpLogHandler() }))
        }
        let meter = Meter()
        let hub = GameHub(
            consumers: [meter, AlertConsumer(publisher: pipeline.publisher)] + (manager.map { [$0] } ?? []))
        let subscribed = Mutex<Set<String>>([])
        let subscribing = Mutex(0.0)
        let perChannel = activities / BroadcastChannelPlan.buckets.count
        let client = providers.client
        let statistics = pipeline.statistics
        let delivered = { @Sendable in
            let byChannel = statistics.snapshot.byChannel
            return (byChannel[.liveActivity]?.delivered ?? 0) + (byChannel[.liveActivityChannel]?.delivered ?? 0)
        }
        let source = ReplaySource(
            games: games, sink: hub, clock: clock,
            settle: {
                let before = delivered()
                await manager?.waitUntilIdle()
                // Only when a channel was made: reading every device at each play would be the
                // benchmark's own cost, charged to the server.
                if let manager, manager.counts.created > subscribed.withLock({ $0.count }) {
                    for device in try await store.activeDevices() {
                        guard case .liveActivityChannel(let id, _, _, _) = device.channel,
                            !BroadcastChannelPlan.isIntent(id),
                            subscribed.withLock({ $0.insert(id).inserted })
                        else { continue }
                        // The activities' own doing (the app and Apple), not the server's: its
                        // CPU is left out of the server's.
                        let before = ProcessTimes.cpuSeconds()
                        try await Self.subscribe(perChannel, to: id, fake: fake, client: client)
                        subscribing.withLock { $0 += ProcessTimes.cpuSeconds() - before }
                    }
                }
                try await pipeline.waitUntilIdle()
                meter.settled(updated: delivered() > before)
            }, afterDay: { try await pipeline.waitUntilDrained(manual: clock) })
        let cpuBefore = ProcessTimes.cpuSeconds()
        let group = ServiceGroup(
            configuration: .init(
                services: pipeline.services.map { .init(service: $0) } + [
                    .init(service: source, successTerminationBehavior: .gracefullyShutdownGroup)
                ], logger: Logger(label: "bench.liveactivity", factory: { _ in SwiftLogNoOpLogHandler() })))
        try await group.run()
        let cpu = ProcessTimes.cpuSeconds() - cpuBefore - subscribing.withLock { $0 }
        let (changes, latencies) = meter.figures
        var figures = Figures(changes: changes, requests: delivered(), cpuSeconds: cpu, latencies: latencies)
        figures.reached = manager == nil ? figures.requests : try await Self.reached(fake: fake, client: client)
        if let manager {
            // After the final and its longest delay, every channel is deleted: none left.
            clock.advance(by: 3600)
            await manager.step()
            let open = try await Self.openChannels(fake: fake, client: client)
            figures.channels = (manager.counts.created, manager.counts.deleted, open)
            print(
                "\(date): broadcast channels: \(manager.counts.created) made, \(manager.counts.deleted) deleted after "
                    + "the final, \(open) left on the fake")
        }
        return figures
    }

    /// Subscribes `count` activities to `channel` on the fake, in batches.
    static func subscribe(_ count: Int, to channel: String, fake: FakeProcess, client: HTTPClient) async throws {
        let path = channel.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? channel
        for start in stride(from: 0, to: count, by: 10_000) {
            let devices = (start..<min(start + 10_000, count)).map { "\(channel)-activity-\($0)" }
            var request = HTTPClientRequest(url: fake.description.url + "/channels/\(path)/subscribers")
            request.method = .POST
            request.body = .bytes(ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: ["devices": devices])))
            let response = try await client.execute(request, timeout: .seconds(60))
            guard response.status == .ok else {
                throw CocoaError(
                    .featureUnsupported, userInfo: [NSLocalizedDescriptionKey: "subscribing: \(response.status)"])
            }
        }
    }

    /// The activity updates every broadcast accepted reached.
    static func reached(fake: FakeProcess, client: HTTPClient) async throws -> Int {
        let response = try await client.execute(
            HTTPClientRequest(url: fake.description.url + "/broadcasts"), timeout: .seconds(60))
        let body = try await response.body.collect(upTo: 1 << 26)
        let object = try JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any]
        let broadcasts = object?["broadcasts"] as? [[String: Any]] ?? []
        return broadcasts.reduce(0) { $0 + ($1["reached"] as? Int ?? 0) }
    }

    /// Channels open on the fake.
    static func openChannels(fake: FakeProcess, client: HTTPClient) async throws -> Int {
        let response = try await client.execute(
            HTTPClientRequest(url: fake.description.url + "/channels/\(bundle)"), timeout: .seconds(60))
        let body = try await response.body.collect(upTo: 1 << 26)
        let object = try JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any]
        return object?["open"] as? Int ?? -1
    }
}

extension LiveActivityBenchmark {
    /// Every day of `month` with games, through broadcast channels alone, on one fake: what was
    /// made, deleted after each day's finals, and left.
    func replayMonth(_ month: String) async throws {
        let parts = month.split(separator: "-").compactMap { Int($0) }
        guard parts.count == 2, (1...12).contains(parts[1]) else {
            throw ValidationError("--month must be YYYY-MM, not '\(month)'")
        }
        let (work, fake, providers) = try Self.start(nohit: nohit)
        defer { Self.stop(work: work, fake: fake, providers: providers) }
        print(
            "workload: every day of \(month) with games replayed, 5 phones (one per delay bucket), "
                + "\(activities / BroadcastChannelPlan.buckets.count) activities on each channel, one nohit fake-apns")
        var total = (days: 0, made: 0, deleted: 0, leftAfterADay: 0)
        for day in 1...31 {
            let date = String(format: "%04d-%02d-%02d", parts[0], parts[1], day)
            guard (try? ReplaySchedule.games(on: date, data: [data]))?.isEmpty == false else { continue }
            let phones = BroadcastChannelPlan.buckets.enumerated().map { index, delay in Self.phone(index, delay: delay)
            }
            let figures = try await replay(
                devices: phones, channels: providers.broadcastClients, providers: providers, fake: fake, work: work,
                name: "day-\(day)", date: date)
            total.days += 1
            total.made += figures.channels.made
            total.deleted += figures.channels.deleted
            total.leftAfterADay = max(total.leftAfterADay, figures.channels.left)
        }
        let left = try await Self.openChannels(fake: fake, client: providers.client)
        print(
            "\(month): \(total.days) days replayed; \(total.made) broadcast channels made, \(total.deleted) deleted "
                + "after their finals; at most \(total.leftAfterADay) left after a day's last final; \(left) on the "
                + "fake at the end")
    }

    /// A work directory, the fake as its own process, and the channels to it.
    static func start(nohit: String?) throws -> (work: String, fake: FakeProcess, providers: ProviderChannels) {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("nohit-la-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        let executable =
            nohit
            ?? URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(
                "nohit"
            ).path
        let fake = try FakeProcess(executable: executable, directory: (work as NSString).appendingPathComponent("fake"))
        do {
            return (work, fake, try ProviderChannels(try settings(fake)))
        } catch {
            fake.stop()
            throw error
        }
    }

    static func stop(work: String, fake: FakeProcess, providers: ProviderChannels) {
        Task { [providers] in try? await providers.shutdown() }
        fake.stop()
        try? FileManager.default.removeItem(atPath: work)
    }

    /// The providers' settings for the fake.
    static func settings(_ fake: FakeProcess) throws -> ProviderSettings {
        var settings = ProviderSettings(vapidKey: .init())
        settings.apnsProductionURL = fake.description.url
        settings.apnsSandboxURL = fake.description.url
        settings.apnsKey = try KeyFiles.readSigningKey(fake.description.key)
        settings.apnsKeyID = fake.description.keyID
        settings.apnsTeamID = fake.description.teamID
        settings.extraCertificateAuthorities = [try KeyFiles.readText(fake.description.ca)]
        return settings
    }
}
