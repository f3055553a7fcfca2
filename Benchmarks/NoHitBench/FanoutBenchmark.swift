import Alerts
import ArgumentParser
import Baseball
import CAllocator
import Clocks
import Delivery
import Foundation
import NIOCore
import Pipeline
import Retrosheet
import Storage

#if canImport(Glibc)
    import Glibc
#endif

/// `nohit-bench fanout`: one moment fanned out to many devices through the whole pipeline
/// (planner, outbox in SQLite or PostgreSQL, dispatchers of one or more instances, real channel
/// over HTTP/2 and TLS) to `nohit fake-apns` running as its own process.
struct FanoutBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fanout",
        abstract: "Fan one moment out to many APNs or Web Push devices through nohit fake-apns; print pushes/s, "
            + "latency from moment to acknowledgement, CPU and memory."
    )

    @Option(help: "Devices to alert.")
    var devices = 100_000

    @Option(help: "apns or web-push.")
    var channel = "apns"

    @Option(help: "Requests in flight.")
    var concurrency = 600

    @Option(help: "The channel's transport: http2 (the lean client) or async-http-client.")
    var transport = TransportChoice.http2.rawValue

    @Option(help: "HTTP/2 connections to the provider (http2 transport; default: 8 for APNs, 2 for Web Push).")
    var connections: Int?

    @Option(help: "The nohit executable (runs the fake provider); default: beside this benchmark.")
    var nohit: String?

    @Option(help: "Retrosheet 2020 season (the moment is Giolito's no-hitter, 2020-08-25).")
    var data = "../shared/data/retrosheet"

    @Option(help: "Runs, each from scratch (a fresh database and fake); with more than one, the median too.")
    var runs = 1

    @Option(
        help: ArgumentHelp(
            "The database: SQLite by default (a file of the run's own), or postgres://user@host/db (each run in "
                + "a schema of its own, dropped after).", valueName: "url"))
    var database: String?

    @Option(
        help: ArgumentHelp(
            "PostgreSQL: instances sharing the fan-out, each with its own store (connection pool, instance id, "
                + "leases), dispatchers and provider connections, in this process; one records the moment, NOTIFY "
                + "wakes the others."))
    var instances = 1

    @Option(
        help: ArgumentHelp(
            "Days of the 2020 season before the moment to publish and deliver first, not timed (0: an empty outbox).",
            discussion: "The moment's own day is included up to the moment, so its bid has its history: its "
                + "earlier innings in the outbox, and its devices among the bid's followers."))
    var seasonDays = 0

    /// What one run measured, for the summary over runs.
    struct Figures {
        var committed: Double
        var acknowledged: Double
        var sendingRate: Double
        var cpuPer10K: Double
        var fakeCPUPer10K: Double
    }

    func run() async throws {
        guard runs >= 1 else { throw ValidationError("--runs must be at least 1") }
        var all: [Figures] = []
        for index in 1...runs {
            if runs > 1 { print("run \(index) of \(runs)") }
            all.append(try await runOnce())
        }
        guard runs > 1 else { return }
        func summary(_ label: String, _ format: String, _ value: (Figures) -> Double) {
            let sorted = all.map(value).sorted()
            let median = Medians.median(sorted)
            print(
                "\(label) over \(runs) runs: median " + String(format: format, median) + ", min "
                    + String(format: format, sorted[0]) + ", max " + String(format: format, sorted[sorted.count - 1]))
        }
        summary("moment → all acknowledged", "%.3f s") { $0.acknowledged }
        summary("moment → outbox committed", "%.3f s") { $0.committed }
        summary("sending", "%.0f pushes/s") { $0.sendingRate }
        summary("cpu per 10,000 in nohit", "%.3f s") { $0.cpuPer10K }
        summary("cpu per 10,000 in the fake", "%.3f s") { $0.fakeCPUPer10K }
    }

    private func runOnce() async throws -> Figures {
        guard let kind = ChannelKind(rawValue: channel), [.apns, .webPush].contains(kind) else {
            throw ValidationError("--channel must be apns or web-push")
        }
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("nohit-fanout-\(UUID().uuidString)")
            .path
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }

        // The fake provider, as its own process.
        let executable =
            nohit
            ?? URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("nohit").path
        let fake = try FakeProcess(executable: executable, directory: (work as NSString).appendingPathComponent("fake"))
        defer { fake.stop() }

        // The moment: the last out of Giolito's no-hitter.
        let games = try ReplaySchedule.games(on: "2020-08-25", data: [data])
        guard let game = games.first(where: { $0.record.id == "CHA202008250" }) else {
            throw ValidationError("CHA202008250 is not in \(data)")
        }
        let followed = GameFollower.moments(
            gameID: game.record.id, starters: game.record.startingAppearances, homeBatsFirst: game.record.homeBatsFirst,
            updates: game.updates.map(\.update), result: game.result)
        guard let completed = followed.moments.first(where: { $0.kind == .completed }) else {
            throw ValidationError("no completed moment in CHA202008250")
        }

        guard instances >= 1 && instances <= 8 else { throw ValidationError("--instances must be 1 to 8") }
        guard let database, PostgresStore.Location.isURL(database) else {
            guard instances == 1 else { throw ValidationError("--instances needs --database postgres://…") }
            let store = try SQLiteStore(path: (work as NSString).appendingPathComponent("bench.sqlite"))
            return try await measure(
                stores: [store], kind: kind, fake: fake, moment: completed, game: game.info, storeName: "SQLite (WAL)")
        }
        var named = try PostgresStore.Location(url: database)
        named.schema = "bench_" + UUID().uuidString.prefix(8).lowercased()
        let location = named
        let secrets = SecretBox.ephemeral()
        let storeName = "PostgreSQL (\(instances) instance\(instances == 1 ? "" : "s") claiming with SKIP LOCKED)"
        @Sendable func open(_ index: Int, _ stores: [PostgresStore]) async throws -> Figures {
            guard index < instances else {
                let figures: Figures
                do {
                    figures = try await measure(
                        stores: stores, kind: kind, fake: fake, moment: completed, game: game.info,
                        storeName: storeName)
                } catch {
                    try? await stores[0].dropSchema()
                    throw error
                }
                try await stores[0].dropSchema()
                return figures
            }
            return try await PostgresStore.withStore(location, secrets: secrets, instance: "bench-\(index + 1)") {
                try await open(index + 1, stores + [$0])
            }
        }
        return try await open(0, [])
    }

    /// The fan-out itself over `stores` (one per instance; the first records the moment).
    private func measure(
        stores: [any ServiceStore], kind: ChannelKind, fake: FakeProcess, moment completed: Moment, game: GameInfo,
        storeName: String
    ) async throws -> Figures {
        let store = stores[0]
        var settings = ProviderSettings(vapidKey: .init())
        settings.apnsProductionURL = fake.description.url
        settings.apnsSandboxURL = fake.description.url
        settings.apnsKey = try KeyFiles.readSigningKey(fake.description.key)
        settings.apnsKeyID = fake.description.keyID
        settings.apnsTeamID = fake.description.teamID
        settings.extraCertificateAuthorities = [try KeyFiles.readText(fake.description.ca)]
        guard let transportChoice = TransportChoice(rawValue: transport) else {
            throw ValidationError("--transport must be http2 or async-http-client")
        }
        settings.apnsTransport = transportChoice
        // Web Push never travels over AsyncHTTPClient: that choice means HTTP/1.1 for it.
        settings.webPushTransport = transportChoice == .http2 ? .http2 : .http1
        // The fake listens on loopback: its endpoints are trusted, as `--fake-apns` makes them.
        if let origin = HTTP1Client.Target(url: fake.description.url) {
            settings.endpointGuard.trusted.insert(EndpointGuard.Endpoint(host: origin.host, port: origin.port))
        }
        if let connections {
            settings.apnsConnections = connections
            settings.webPushConnections = connections
        }
        let connections = kind == .apns ? settings.apnsConnections : settings.webPushConnections
        let providers = try ProviderChannels(settings)
        let setupStart = ContinuousClock.now
        let registered = try await register(
            kind: kind, count: devices, store: store, client: providers.client, fake: fake)
        let setupSeconds = (ContinuousClock.now - setupStart).seconds

        let clock = SystemWallClock()
        let channels = providers.channels.filter { $0.kind == kind }
        let pipeline = AlertPipeline(store: store, channels: channels, clock: clock, concurrency: concurrency)
        // More instances: each its own provider connections and dispatchers on its own store.
        var others: [(providers: ProviderChannels, pipeline: AlertPipeline)] = []
        for other in stores.dropFirst() {
            let theirs = try ProviderChannels(settings)
            others.append(
                (
                    theirs,
                    AlertPipeline(
                        store: other, channels: theirs.channels.filter { $0.kind == kind }, clock: clock,
                        concurrency: concurrency)
                ))
        }
        // Warm up: the connection, TLS and the provider token, as in a running service; and the
        // directory of active devices, which a running service loads at its first moment and then
        // only tops up with what changed (its cold load is timed and printed on its own).
        try await warmUp(kind: kind, channel: channels[0], fake: fake, client: providers.client)
        for other in others {
            try await warmUp(
                kind: kind, channel: other.pipeline.dispatchers[0].channel, fake: fake, client: providers.client)
        }
        let season = try await deliverSeason(
            before: completed, store: store, channels: channels, clock: clock, fake: fake, client: providers.client)
        // What set-up freed goes back to the system first, so the directory's own memory shows.
        nohit_return_freed_memory()
        let residentBeforeDirectory = ProcessMemory.kilobytes("VmRSS")
        let directoryStart = ContinuousClock.now
        let directorySize = try await pipeline.directory.active().count
        let directorySeconds = (ContinuousClock.now - directoryStart).seconds
        let directoryKilobytes = ProcessMemory.kilobytes("VmRSS") - residentBeforeDirectory

        let stop = StopSignal()
        let pipelines = [pipeline] + others.map(\.pipeline)
        let dispatchers = Task {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for pipeline in pipelines { group.addTask { try await pipeline.runDispatchers(stop: stop) } }
                try await group.waitForAll()
            }
        }
        // The other instances hear of the moment's rows by NOTIFY, as separate processes would.
        let listening = zip(stores.dropFirst(), others.map(\.pipeline)).compactMap { store, pipeline in
            (store as? any CoordinationStore).map { ($0, pipeline) }
        }
        let listeners = Task {
            await withTaskGroup(of: Void.self) { group in
                for (coordination, pipeline) in listening {
                    group.addTask {
                        try? await coordination.watchOutbox { channel in
                            if let kind = ChannelKind(rawValue: channel) { pipeline.wakes[kind]?.signal() }
                        }
                    }
                }
            }
        }
        defer { listeners.cancel() }
        // Memory: what the process holds as the moment arrives (the directory included), and
        // its peak during the fan-out alone (the peaks start again here; set-up registered the
        // devices, and in the fake made their subscriptions).
        let setupPeak = (nohit: ProcessMemory.kilobytes("VmHWM"), fake: fake.memoryKilobytes("VmHWM"))
        let peaksReset = (nohit: ProcessMemory.resetPeak(), fake: fake.resetPeakMemory())
        let residentAtMoment = (nohit: ProcessMemory.kilobytes("VmRSS"), fake: fake.memoryKilobytes("VmRSS"))
        let fakeCPUBefore = fake.cpuSeconds()
        let databaseCPUBefore = ProcessTimes.cpuSeconds(ofProcessesNamed: "postgres")
        let cpuBefore = ProcessTimes.cpuSeconds()
        let momentTime = Date()
        let start = ContinuousClock.now
        Self.mark("start")
        let published = try await pipeline.publisher.publish(completed, game: game, at: momentTime)
        let recorded = ContinuousClock.now
        Self.mark("committed")
        try await pipeline.waitUntilDrained(manual: nil)
        let drained = ContinuousClock.now
        Self.mark("end")
        let cpu = ProcessTimes.cpuSeconds() - cpuBefore
        let fakeCPU = fake.cpuSeconds() - fakeCPUBefore
        let databaseCPU = ProcessTimes.cpuSeconds(ofProcessesNamed: "postgres") - databaseCPUBefore
        // Peak memory as the fan-out leaves it, before the benchmark's own checks below.
        let fanoutPeak = (nohit: ProcessMemory.kilobytes("VmHWM"), fake: fake.memoryKilobytes("VmHWM"))
        let residentAtEnd = (anonymous: ProcessMemory.kilobytes("RssAnon"), file: ProcessMemory.kilobytes("RssFile"))
        // The WAL checkpoint the fan-out put off runs when the dispatcher goes idle; this waits
        // behind it (or makes it), so the next moment's record would not wait longer than this.
        try await store.deliveriesSettled(now: Date())
        let settled = ContinuousClock.now
        stop.request()
        try await dispatchers.value

        var statistics = pipeline.statistics.snapshot
        let perInstance = pipelines.map(\.statistics.snapshot.delivered)
        for other in others {
            for (channel, counts) in other.pipeline.statistics.snapshot.byChannel {
                var merged = statistics.byChannel[channel] ?? counts
                if statistics.byChannel[channel] != nil {
                    merged.delivered += counts.delivered
                    merged.retried += counts.retried
                    merged.failed += counts.failed
                    merged.pruned += counts.pruned
                    merged.tokenRefreshes += counts.tokenRefreshes
                    merged.latency.add(counts.latency)
                }
                statistics.byChannel[channel] = merged
            }
        }
        let accepted = try await fake.acceptedCount(kind: kind.rawValue, client: providers.client)
        try await providers.shutdown()
        for other in others { try await other.providers.shutdown() }
        let wall = (drained - start).seconds
        // Exact to three significant digits, from the dispatcher's bounded histogram.
        let latencies = statistics.latency
        func percentile(_ p: Double) -> Double { Double(latencies.valueAtPercentile(p * 100)) / 1e6 }
        let delivered = Double(max(1, statistics.delivered))
        let figures = Figures(
            committed: (recorded - start).seconds, acknowledged: wall,
            sendingRate: Double(statistics.delivered) / (drained - recorded).seconds,
            cpuPer10K: cpu / delivered * 10_000, fakeCPUPer10K: fakeCPU / delivered * 10_000)

        print(
            "workload: 1 moment (\(completed.id)) to \(registered) \(kind.rawValue) devices; planner, outbox in "
                + "\(storeName), dispatcher with \(concurrency) in flight"
                + (stores.count > 1
                    ? " per instance (deliveries: \(perInstance.map(String.init).joined(separator: " + ")))" : "")
                + ", "
                + (kind == .apns ? "APNs JWT" : "RFC 8291 encryption + VAPID")
                + " + HTTP/2 (\(transport)"
                + (transportChoice == .http2 ? ", \(connections) connection\(connections == 1 ? "" : "s"))" : ")")
                + " over TLS "
                + "to `nohit fake-apns` (its own process) on this machine, \(ProcessInfo.processInfo.activeProcessorCount) cores"
        )
        print(String(format: "setup (not timed): devices registered in %.1f s", setupSeconds))
        if seasonDays > 0 {
            print(
                String(
                    format: "season before the moment (not timed): %d days, %d moments published and delivered in "
                        + "%.1f s; outbox %d rows, %d devices following the bid",
                    seasonDays, season.moments, season.seconds, season.outboxRows, season.followers))
        }
        print(
            String(
                format:
                    "directory of active devices (not timed; once per process): %d devices loaded in %.3f s, %d MB "
                    + "(RSS %d MB before it, set-up's freed memory returned)",
                directorySize, directorySeconds, directoryKilobytes / 1024, residentBeforeDirectory / 1024))
        print(
            "outcome: \(published.deliveries) planned, \(statistics.delivered) acknowledged, \(statistics.retried) retried, "
                + "\(statistics.failed) failed; fake provider counted \(accepted)")
        print(String(format: "moment → outbox committed: %.3f s", figures.committed))
        print(String(format: "moment → all acknowledged: %.3f s", wall))
        print(
            String(
                format:
                    "throughput: %.0f pushes/s from the moment; %.0f pushes/s sending (outbox committed → all acknowledged)",
                Double(statistics.delivered) / wall, figures.sendingRate))
        if latencies.totalCount > 0 {
            print(
                String(
                    format: "moment → acknowledgement: p50 %.3f s, p99 %.3f s, max %.3f s", percentile(0.5),
                    percentile(0.99), Double(latencies.max) / 1e6))
        }
        print(
            String(
                format: "after the last acknowledgement (not timed): the WAL checkpoint put off during the fan-out "
                    + "done %.3f s later", (settled - drained).seconds))
        print(
            String(
                format: "cpu: %.2f s in nohit (%.3f s per 10,000), %.2f s in the fake provider (%.3f s per 10,000)",
                cpu, figures.cpuPer10K, fakeCPU, figures.fakeCPUPer10K))
        if stores.first is PostgresStore {
            print(
                String(
                    format: "cpu of the PostgreSQL server's processes on this machine: %.2f s (%.3f s per 10,000)",
                    databaseCPU, databaseCPU / delivered * 10_000))
        }
        // A kernel that refuses to reset a peak (before Linux 4.0) leaves it counting from the start.
        func during(_ reset: Bool) -> String { reset ? "during the fan-out" : "since start, set-up included" }
        print(
            "memory (RSS): this process \(residentAtMoment.nohit / 1024) MB at the moment (directory loaded), "
                + "peak \(fanoutPeak.nohit / 1024) MB \(during(peaksReset.nohit)); the fake "
                + "\(residentAtMoment.fake / 1024) MB at the moment, peak \(fanoutPeak.fake / 1024) MB "
                + during(peaksReset.fake))
        print(
            "memory (RSS) of this process at the end: \(residentAtEnd.anonymous / 1024) MB its own, "
                + "\(residentAtEnd.file / 1024) MB mapped files (the database's memory map among them: pages of "
                + "the OS's file cache, which it can reclaim)")
        print(
            "memory (RSS) peak in set-up, not timed: this process \(setupPeak.nohit / 1024) MB"
                + (runs > 1 ? " (over the runs so far)" : "") + ", the fake \(setupPeak.fake / 1024) MB")
        if statistics.delivered != registered || accepted != registered {
            throw ValidationError("not every device was reached")
        }
        return figures
    }

    /// With NOHIT_BENCH_MARKS set, prints CLOCK_MONOTONIC at the edges of the timed section (to
}
