import Baseball
import Foundation
import Logging
import ServiceLifecycle
import Storage
import Synchronization

/// Applies the shared game log to this instance's game hub, in the log's order, as a Service:
/// every instance sees every game (the board, the stream, moments to store) whoever follows it.
/// Woken by `NOTIFY` as items are appended, and reading every `pollInterval` besides (a
/// notification lost while the listening connection was down costs at most that long).
package struct GameLogReader: Service {
    package let store: any CoordinationStore
    package let run: String
    package let hub: GameHub
    /// The number after which reading starts.
    package let start: Int64
    package var pollInterval: Duration = .milliseconds(250)
    package var batch = 500
    package var logger = Logger(label: "nohit.instances")
    /// How far the log has been applied.
    package let position: Position

    /// The last number applied, readable while the reader runs.
    package final class Position: Sendable {
        private let value: Atomic<Int64>
        package init(_ start: Int64) { value = Atomic(start) }
        package var applied: Int64 { value.load(ordering: .acquiring) }
        func set(_ sequence: Int64) { value.store(sequence, ordering: .releasing) }
    }

    package init(store: any CoordinationStore, run: String, hub: GameHub, start: Int64) {
        self.store = store
        self.run = run
        self.hub = hub
        self.start = start
        position = Position(start)
    }

    package func run() async throws {
        let wake = WakeSignal()
        do {
            try await cancelWhenGracefulShutdown {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { await listen(wake) }
                    group.addTask { try await read(wake) }
                    try await group.next()
                    group.cancelAll()
                }
            }
        } catch is CancellationError {
            // Shutdown.
        }
    }

    /// Listens for appends until cancelled, listening again after a lost connection.
    private func listen(_ wake: WakeSignal) async {
        while !Task.isCancelled {
            do {
                try await store.watchItems(run: run) { wake.signal() }
            } catch {
                if Task.isCancelled { return }
                logger.warning(
                    "listening for the game log failed; polling until it listens again",
                    metadata: ["error": "\(error)"])
            }
            try? await Task.sleep(for: .seconds(1))
        }
    }

    private func read(_ wake: WakeSignal) async throws {
        var last = start
        while true {
            try Task.checkCancellation()
            let items: [LoggedGameItem]
            do {
                items = try await store.items(run: run, after: last, limit: batch)
            } catch {
                // The database may come back; nothing was applied, so nothing is lost.
                try Task.checkCancellation()
                logger.warning("reading the game log failed; trying again", metadata: ["error": "\(error)"])
                try await Task.sleep(for: .seconds(1))
                continue
            }
            for logged in items {
                // A failure here (a moment that could not be stored) stops the reader: it must not
                // be passed over.
                try await hub.receive(logged.item, gameID: logged.gameID, at: logged.time, sequence: logged.sequence)
                last = logged.sequence
                position.set(last)
            }
            if items.count < batch {
                await withTaskGroup(of: Void.self) { group in
                    group.addTask { await wake.wait() }
                    group.addTask { try? await Task.sleep(for: pollInterval) }
                    await group.next()
                    group.cancelAll()
                }
            }
        }
    }
}
