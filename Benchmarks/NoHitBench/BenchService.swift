import Assembly
import Clocks
import Deals
import Logging
import Pipeline

/// The service as `nohit serve` builds it (``NoHitService``, the composition root), for the
/// benchmarks of what it serves: on an SQLite database in `work`, with no delivery channels (the
/// stream and the board are measured, not the pushes), every client from 127.0.0.1 (so the
/// per-client limits are off, as behind a proxy), the games said by the benchmark itself.
enum BenchService {
    /// Runs the service while `body` drives it, given the service and its port; stops it after.
    static func run(
        work: String, data: String, clock: ManualWallClock, serverThreads: Int,
        consumers: [any GameChangeConsumer] = [], logger: Logger,
        _ body: @escaping @Sendable (NoHitService, Int) async throws -> Void
    ) async throws {
        var http = ServiceSettings.HTTP()
        http.port = 0
        http.threads = serverThreads
        http.limits.maxConnectionsPerClient = 0
        let settings = ServiceSettings(
            store: StoreLocation(dataDir: work), source: .driven(clock: clock), http: http,
            retrosheetPlaces: [data], dealRules: try DealRuleFile.load(adding: []))
        let (ports, listening) = AsyncStream.makeStream(of: Int.self)
        var hooks = NoHitService.Hooks()
        hooks.consumers = consumers
        hooks.logger = logger
        hooks.onListening = { listening.yield($0) }
        try await NoHitService.withService(settings, hooks: hooks) { service in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { _ = try await service.run() }
                var iterator = ports.makeAsyncIterator()
                guard let port = await iterator.next() else { throw CancellationError() }
                try await body(service, port)
                service.feed.finishAll()
                group.cancelAll()
            }
        }
    }
}
