import AsyncHTTPClient
import Baseball
import Clocks
import Logging
import NIOPosix
import Pipeline
import Scores
import Server
import ServiceLifecycle
import Storage
import Synchronization
import UnixSignals

/// The whole service, built from one ``ServiceSettings`` value by ``withService(_:hooks:_:)`` (the
/// composition root: `nohit serve`, `nohit replay`, the tests and the benchmarks all start it
/// this way): the store, the source of games, the game hub and its consumers (the alert publisher,
/// the deal desk, the live board and stream, the history warmer), the dispatchers, the HTTP API
/// and the services beside it, ready to run as one `ServiceGroup`.
package struct NoHitService: Sendable {
    /// What the caller adds to the service, beyond its settings.
    package struct Hooks: Sendable {
        /// Consumers of every game change, after the alert publisher and the deal desk and before
        /// the live board and stream (a replay's printer of moments, a benchmark's clock).
        package var consumers: [any GameChangeConsumer] = []
        /// Told the port the HTTP server listens on, once it does.
        package var onListening: @Sendable (_ port: Int) async -> Void = { _ in }
        /// Told what an operator should read once: what a first start created, what a restart
        /// recovered (the command prints it).
        package var notice: @Sendable (String) -> Void = { _ in }
        /// The signals that stop the service gracefully (none: it ends by itself, or when the
        /// caller's task is cancelled).
        package var signals: [UnixSignal] = []
        package var logger = Logger(label: "nohit.serve")

        package init() {}
    }

    package let settings: ServiceSettings
    package let store: OpenedStore
    /// The service's clock: a replay's, at its speed; the wall clock's for the Stats API.
    package let clock: any WallClock
    /// The alert pipeline after the engine: the publisher, the outbox's dispatchers.
    package let pipeline: AlertPipeline
    package let alerts: AlertConsumer
    /// The broadcast channels kept on APNs for followed bids, when APNs has a key.
    package let broadcasts: BroadcastChannels?
    package let deals: DealDesk
    /// One follower per game: sources say what happens to it.
    package let hub: GameHub
    /// How often bids finished in the seasons known, when the service knows: every out of a
    /// notable bid is then a moment.
    package let odds: BidOdds?
    package let board: LiveBoard
    package let feed: LiveFeed
    package let metrics: ServerMetrics
    /// The HTTP API, when the settings ask for one.
    package let api: APIServer?
    /// How far a replayed day got, when a day is replayed here.
    package let progress: ReplaySource.Progress?
    /// The run the instances sharing a PostgreSQL database play together, when they do.
    package let run: SharedRun?
    /// What the service runs, in the order it starts them (it stops them in reverse).
    let services: [ServiceGroupConfiguration.ServiceConfiguration]
    let hooks: Hooks
    /// What is shut down after the services: the delivery channels, the Stats API's client, the
    /// server's own event loops.
    let channels: ProviderChannels?
    let statsAPIClient: HTTPClient?
    let eventLoops: MultiThreadedEventLoopGroup?

    /// Opens the store the settings name, builds the service on it, and gives it to `body` (which
    /// usually runs it); shuts down what it opened once `body` returns or throws.
    package static func withService<Result: Sendable>(
        _ settings: ServiceSettings, hooks: Hooks = Hooks(), _ body: @Sendable (NoHitService) async throws -> Result
    ) async throws -> Result {
        // A start refused before the server listens (a port in use, a provider's settings, a
        // missing VAPID key) leaves nothing behind that it made: no data directory, database or key.
        let made = StartedFiles(settings)
        let listening = Mutex(false)
        var hooks = hooks
        let told = hooks.onListening
        hooks.onListening = { port in
            listening.withLock { $0 = true }
            await told(port)
        }
        do {
            return try await settings.store.withStore(notice: hooks.notice) { [hooks] opened in
                let service = try await build(settings, store: opened, hooks: hooks)
                let result: Result
                do {
                    result = try await body(service)
                } catch {
                    await service.shutdown()
                    throw error
                }
                await service.shutdown()
                return result
            }
        } catch {
            if !listening.withLock({ $0 }) && settings.http != nil, let removed = made.removeNew() {
                hooks.notice("the start was refused, so what it had made is removed again: \(removed)")
            }
            throw error
        }
    }

    /// Runs every service until they end (a replay's day, with `endsWithTheDay`), a signal stops
    /// them, or the task is cancelled; returns the signal, if one did.
    package func run() async throws -> UnixSignal? {
        let group = ServiceGroup(
            configuration: .init(services: services, gracefulShutdownSignals: hooks.signals, logger: hooks.logger))
        guard !hooks.signals.isEmpty else {
            try await group.run()
            return nil
        }
        // Which signal it was, for the exit status (the group's own handler does the stopping).
        return try await withThrowingTaskGroup(of: UnixSignal?.self) { tasks in
            tasks.addTask {
                for await signal in await UnixSignalsSequence(trapping: hooks.signals) { return signal }
                return nil
            }
            tasks.addTask {
                try await group.run()
                return nil
            }
            var signal: UnixSignal?
            // The first to end: the group (done, or failed), or a signal (then the group's end).
            while let next = try await tasks.next() {
                guard let next else { break }
                signal = next
            }
            tasks.cancelAll()
            return signal
        }
    }

    /// Closes the clients and event loops the services used (after they have stopped).
    private func shutdown() async {
        await channels?.close(logger: hooks.logger)
        do {
            try await statsAPIClient?.shutdown()
        } catch {
            hooks.logger.warning("the Stats API client did not shut down cleanly", metadata: ["error": "\(error)"])
        }
        do {
            try await eventLoops?.shutdownGracefully()
        } catch {
            hooks.logger.warning("the server's event loops did not shut down cleanly", metadata: ["error": "\(error)"])
        }
    }
}
