import Clocks
import Foundation
import Logging
import Pipeline
import ServiceLifecycle
import Storage

/// What an instance runs beside the rest when several instances share a PostgreSQL database: its
/// part in the set (heartbeat, leases, wake-ups) and the reader applying the shared game log to its
/// hub. The sources say the games this instance holds into the log.
struct SharedInstances: Sendable {
    let coordination: any CoordinationStore
    let run: SharedRun
    let leases: GameLeases
    let log: SharedGameLog
    let reader: GameLogReader
    let instance: InstanceService

    /// `start`: where the reader begins in the log (a replayed day from its start; the Stats API's
    /// log from the last day and a half).
    init(
        coordination: any CoordinationStore, run: SharedRun, hub: GameHub, pipeline: AlertPipeline,
        clock: any WallClock, about: String, start: Int64 = 0, logger: Logger
    ) {
        self.coordination = coordination
        self.run = run
        let process = ProcessInfo.processInfo
        leases = GameLeases(
            store: coordination, run: run.id,
            about: "\(about) on \(process.hostName), pid \(process.processIdentifier)",
            logger: logger)
        log = SharedGameLog(store: coordination, run: run.id)
        reader = GameLogReader(store: coordination, run: run.id, hub: hub, start: start, logger: logger)
        instance = InstanceService(
            leases: leases, outbox: pipeline.store, clock: clock, wakes: pipeline.wakes, logger: logger)
    }

    /// In order after the dispatchers: shut down before them (the reader stops, then the instance
    /// gives up its games).
    var services: [ServiceGroupConfiguration.ServiceConfiguration] {
        [.init(service: instance), .init(service: reader)]
    }

    /// Returns once this instance has applied everything the log holds now.
    func caughtUp() async throws {
        await reader.position.wait(until: try await coordination.lastSequence(run: run.id))
        try Task.checkCancellation()
    }
}
