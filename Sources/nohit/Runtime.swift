import Alerts
import ArgumentParser
import Baseball
import Clocks
import Deals
import Delivery
import Foundation
import Logging
import Pipeline
import ServiceLifecycle
import Storage
import UnixSignals

/// The one graph of services behind every command that runs the pipeline (`nohit serve`, `nohit
/// replay`): a source (a replayed day, or the Stats API) says what happens in each game to the game
/// hub, whose followers apply each update once and hand every change to the alert publisher and
/// then to the other consumers (the live board and stream); one dispatcher per channel drains the
/// outbox. All of it runs in one `ServiceGroup`, shut down gracefully (in reverse order: the
/// source stops, then the dispatchers finish what is in flight and record it) on SIGINT or SIGTERM.
struct Runtime {
    let pipeline: AlertPipeline
    let alerts: AlertConsumer
    /// The deals: each final game evaluated, its triggers stored and announced.
    let deals: DealDesk
    let hub: GameHub
    /// The operator's feedback hook, when one is set (`feedback.url`).
    let feedback: FeedbackHook?

    /// `consumers` get every game change after the alert publisher has stored its moments and the
    /// deal desk has evaluated a game that ended.
    init(
        store: any DeviceStore & OutboxStore & DealStore, channels: [any DeliveryChannel], clock: any WallClock,
        concurrency: Int, staleAfter: TimeInterval, statistics: DeliveryStatistics, dealRules: [DealRule],
        seasonFiles: @escaping @Sendable (Int) -> [String] = { _ in [] }, consumers: [any GameChangeConsumer],
        feedback: FeedbackHook? = nil, odds: BidOdds? = nil,
        meaning: (@Sendable (_ completed: Moment, _ game: GameInfo) async -> String?)? = nil, logger: Logger
    ) {
        self.feedback = feedback
        pipeline = AlertPipeline(
            store: store, channels: channels, clock: clock, concurrency: concurrency, staleAfter: staleAfter,
            statistics: statistics,
            logger: logger)
        alerts = AlertConsumer(publisher: pipeline.publisher)
        deals = DealDesk(rules: dealRules, store: store, publisher: pipeline.publisher, seasonFiles: seasonFiles)
        hub = GameHub(
            consumers: [alerts, DealConsumer(desk: deals)] + consumers, odds: odds, meaning: meaning, logger: logger)
    }

    /// The shipped deal rules and the operator's (`deals.files`), checked: a malformed file stops
    /// the command before anything starts, naming file, rule and reason.
    static func dealRules(_ settings: Settings) throws -> [DealRule] {
        do {
            return try DealRuleFile.load(adding: try settings.strings("deals.files") ?? [])
        } catch {
            throw ValidationError("deal rules: \(error)")
        }
    }

    /// Runs the dispatchers and then `services` (a source, the HTTP server ...) until they end or
    /// a signal stops them; returns the signal, if one did.
    func run(_ services: [ServiceGroupConfiguration.ServiceConfiguration], logger: Logger) async throws -> UnixSignal? {
        let dispatchers = pipeline.services.map { ServiceGroupConfiguration.ServiceConfiguration(service: $0) }
        // The feedback hook first: stopped after the dispatchers, it sends their last prunes.
        let feedback = feedback.map { [ServiceGroupConfiguration.ServiceConfiguration(service: $0)] } ?? []
        let group = ServiceGroup(
            configuration: .init(
                services: feedback + dispatchers + services, gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger))
        // Which signal it was, for the exit status (the group's own handler does the stopping).
        let received = try await withThrowingTaskGroup(of: UnixSignal?.self) { tasks in
            tasks.addTask {
                for await signal in await UnixSignalsSequence(trapping: .sigterm, .sigint) { return signal }
                return nil
            }
            tasks.addTask {
                try await group.run()
                return nil
            }
            var signal: UnixSignal?
            // The first to end: the group (done, or failed), or a signal (then the group's end).
            while let next = try await tasks.next() {
                if let next {
                    signal = next
                } else {
                    break
                }
            }
            tasks.cancelAll()
            return signal
        }
        return received
    }

    /// What an instance runs beside the rest when several instances share a PostgreSQL database:
    /// its part in the set (heartbeat, leases, wake-ups) and the reader applying the shared game log
    /// to its hub. The sources say the games this instance holds into the log.
    struct Shared {
        let coordination: any CoordinationStore
        let run: SharedRun
        let leases: GameLeases
        let log: SharedGameLog
        let reader: GameLogReader
        let instance: InstanceService

        init(
            coordination: any CoordinationStore, run: SharedRun, runtime: Runtime, clock: any WallClock,
            about: String, start: Int64 = 0, logger: Logger
        ) {
            self.coordination = coordination
            self.run = run
            let host = ProcessInfo.processInfo.hostName
            leases = GameLeases(
                store: coordination, run: run.id,
                about: "\(about) on \(host), pid \(ProcessInfo.processInfo.processIdentifier)", logger: logger)
            log = SharedGameLog(store: coordination, run: run.id)
            var reader = GameLogReader(store: coordination, run: run.id, hub: runtime.hub, start: start)
            reader.logger = logger
            self.reader = reader
            var instance = InstanceService(
                leases: leases, outbox: runtime.pipeline.store, clock: clock, wakes: runtime.pipeline.wakes)
            instance.logger = logger
            self.instance = instance
        }

        /// In order after the dispatchers: shut down before them (the reader stops, then the
        /// instance gives up its games).
        var services: [ServiceGroupConfiguration.ServiceConfiguration] {
            [.init(service: instance), .init(service: reader)]
        }

        /// Returns once this instance has applied everything the log holds now.
        func caughtUp() async throws {
            let last = try await coordination.lastSequence(run: run.id)
            while reader.position.applied < last {
                try await Task.sleep(for: .milliseconds(20))
            }
        }
    }
}
