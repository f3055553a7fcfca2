import Alerts
import ArgumentParser
import AsyncHTTPClient
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

extension FanoutBenchmark {
    /// line up `perf record -k CLOCK_MONOTONIC` profiles with it).
    static func mark(_ label: String) {
        guard ProcessInfo.processInfo.environment["NOHIT_BENCH_MARKS"] != nil else { return }
        let now = MonotonicClock.nanoseconds()
        print("mark \(label) \(now / 1_000_000_000).\(String(format: "%09d", now % 1_000_000_000))")
    }

    func register(
        kind: ChannelKind, count: Int, store: any DeviceStore, client: HTTPClient, fake: FakeProcess
    ) async throws -> Int {
        let registrar = Registrar(allowPrivateNetworks: true)
        let now = Date()
        var batch: [Device] = []
        batch.reserveCapacity(10_000)
        var registered = 0
        if kind == .apns {
            for _ in 0..<count {
                var token = "a"
                while token.count < 64 { token += String(format: "%016llx", UInt64.random(in: 0...UInt64.max)) }
                let request = RegistrationRequest(
                    channel: .apns(
                        token: String(token.prefix(64)), environment: .production, topic: "com.example.nohit"))
                batch.append(try registrar.register(request, at: now).device)
                if batch.count == 10_000 {
                    try await store.register(contentsOf: batch)
                    registered += batch.count
                    batch.removeAll(keepingCapacity: true)
                }
            }
        } else {
            // Subscriptions come from the fake push service, as browsers get theirs.
            try await withThrowingTaskGroup(of: [Device].self) { group in
                let perTask = 1000
                for start in stride(from: 0, to: count, by: perTask) {
                    group.addTask {
                        var devices: [Device] = []
                        for _ in start..<min(start + perTask, count) {
                            let subscription = try await fake.subscribe(client: client)
                            devices.append(
                                try registrar.register(
                                    RegistrationRequest(
                                        channel: .webPush(
                                            endpoint: subscription.endpoint, p256dh: subscription.p256dh,
                                            auth: subscription.auth)), at: now
                                ).device)
                        }
                        return devices
                    }
                }
                for try await devices in group {
                    try await store.register(contentsOf: devices)
                    registered += devices.count
                }
            }
        }
        if !batch.isEmpty {
            try await store.register(contentsOf: batch)
            registered += batch.count
        }
        return registered
    }

    /// The `seasonDays` days before the moment (its own day up to it), published through a
    /// pipeline of their own and delivered to the fake, so the outbox holds what a season would
    /// and the moment's bid has its history. The fake's counts are reset after.
    func deliverSeason(
        before moment: Moment, store: any ServiceStore, channels: [any DeliveryChannel], clock: any WallClock,
        fake: FakeProcess, client: HTTPClient
    ) async throws -> (moments: Int, seconds: Double, outboxRows: Int, followers: Int) {
        guard seasonDays > 0 else { return (0, 0, 0, 0) }
        let start = ContinuousClock.now
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let format = DateFormatter()
        format.calendar = calendar
        format.timeZone = calendar.timeZone
        format.dateFormat = "yyyy-MM-dd"
        guard let day = format.date(from: "2020-08-25") else { throw ValidationError("no date") }
        var earlier: [(moment: Moment, game: GameInfo)] = []
        for back in (0..<seasonDays).reversed() {
            guard let date = calendar.date(byAdding: .day, value: -back, to: day) else { continue }
            let games = try ReplaySchedule.games(on: format.string(from: date), data: [data])
            for item in ReplayTimeline(games: games).moments() {
                if item.moment.id == moment.id { break }
                earlier.append((item.moment, item.game))
            }
        }
        let pipeline = AlertPipeline(store: store, channels: channels, clock: clock, concurrency: concurrency)
        let stop = StopSignal()
        let dispatchers = Task { try await pipeline.runDispatchers(stop: stop) }
        for item in earlier {
            try await pipeline.publisher.publish(item.moment, game: item.game, at: clock.now())
            try await pipeline.waitUntilDrained(manual: nil)
        }
        stop.request()
        try await dispatchers.value
        try await fake.reset(client: client)
        return (
            earlier.count, (ContinuousClock.now - start).seconds, try await store.outboxCounts().total,
            try await store.followers(bidKey: moment.bidKey).count
        )
    }

    func warmUp(kind: ChannelKind, channel: any DeliveryChannel, fake: FakeProcess, client: HTTPClient)
        async throws
    {
        // Web Push: registering the subscriptions already opened the connection.
        guard kind == .apns else { return }
        let device = DeviceChannel.apns(
            token: "a" + String(repeating: "0", count: 63), environment: .production, topic: "com.example.nohit")
        for _ in 0..<10 {
            let outcome = await channel.deliver(
                OutboundDelivery(
                    id: UUID(), deviceID: UUID(), channel: device, payload: Data(#"{"aps":{"alert":"warm-up"}}"#.utf8),
                    collapseKey: "warm-up", createdAt: Date(), expiresAt: Date().addingTimeInterval(60)))
            guard case .accepted = outcome else { throw ValidationError("warm-up push failed: \(outcome)") }
        }
        try await fake.reset(client: client)
    }
}
