import Clocks
import Foundation
import Synchronization

/// Wakes a sleeping dispatcher when new deliveries are queued.
package final class WakeSignal: Sendable {
    private struct State {
        var pending = false
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var next: UInt64 = 0
    }

    private let state = Mutex(State())

    package init() {}

    /// Wakes the waiter, or the next one to wait.
    package func signal() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard !state.waiters.isEmpty else {
                state.pending = true
                return []
            }
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns when signalled (or at once if a signal is pending), or when cancelled.
    package func wait() async {
        let id = state.withLock { state -> UInt64 in
            state.next += 1
            return state.next
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resume = state.withLock { state -> Bool in
                    if state.pending || Task.isCancelled {
                        state.pending = false
                        return true
                    }
                    state.waiters[id] = continuation
                    return false
                }
                if resume { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }

    /// Returns when signalled, when `clock` reaches `deadline` (if any), or when cancelled.
    package func wait(until deadline: Date?, clock: any WallClock) async {
        guard let deadline else {
            await wait()
            return
        }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.wait() }
            group.addTask { try? await clock.sleep(until: deadline) }
            await group.next()
            group.cancelAll()
        }
    }
}

/// Asks dispatchers to stop taking new work, finish what is in flight and record it: a graceful
/// shutdown.
package final class StopSignal: Sendable {
    private let requested = Atomic<Bool>(false)
    private let wakes = Mutex<[WakeSignal]>([])

    package init() {}

    package var isRequested: Bool { requested.load(ordering: .acquiring) }

    /// Also wakes these signals' waiters when stop is requested.
    package func wakes(_ signals: [WakeSignal]) {
        wakes.withLock { $0 += signals }
        if isRequested { for signal in signals { signal.signal() } }
    }

    package func request() {
        requested.store(true, ordering: .releasing)
        for signal in wakes.withLock({ $0 }) { signal.signal() }
    }
}
