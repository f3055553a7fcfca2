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
    package let pollInterval: Duration = .milliseconds(250)
    package let batch = 500
    package let logger: Logger
    /// How far the log has been applied.
    package let position: Position

    /// The last number applied, readable while the reader runs, and waited for.
    package final class Position: Sendable {
        private struct State {
            var applied: Int64
            var waiters: [Int: (target: Int64, continuation: CheckedContinuation<Void, Never>)] = [:]
            var next = 0
        }

        private let state: Mutex<State>

        package init(_ start: Int64) { state = Mutex(State(applied: start)) }

        package var applied: Int64 { state.withLock { $0.applied } }

        func set(_ sequence: Int64) {
            let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
                state.applied = sequence
                let ready = state.waiters.filter { $0.value.target <= sequence }
                for id in ready.keys { state.waiters[id] = nil }
                return ready.values.map(\.continuation)
            }
            for waiter in ready { waiter.resume() }
        }

        /// Returns once everything up to `sequence` is applied, or when the task is cancelled.
        package func wait(until sequence: Int64) async {
            let id = state.withLock { state -> Int in
                state.next += 1
                return state.next
            }
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let now = state.withLock { state -> Bool in
                        if state.applied >= sequence || Task.isCancelled { return true }
                        state.waiters[id] = (sequence, continuation)
                        return false
                    }
                    if now { continuation.resume() }
                }
            } onCancel: {
                state.withLock { $0.waiters.removeValue(forKey: id) }?.continuation.resume()
            }
        }
    }

    package init(
        store: any CoordinationStore, run: String, hub: GameHub, start: Int64,
        logger: Logger = Logger(label: "nohit.instances")
    ) {
        self.store = store
        self.run = run
        self.hub = hub
        self.start = start
        self.logger = logger
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
                    metadata: ["error": "\(PostgresStore.describe(error))"])
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
                logger.warning(
                    "reading the game log failed; trying again", metadata: ["error": "\(PostgresStore.describe(error))"]
                )
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
