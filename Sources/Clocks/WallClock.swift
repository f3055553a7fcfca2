import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Wall-clock time, injected wherever code reads the time or waits for a moment of it, so
/// replays run at any speed and tests run instantly.
package protocol WallClock: Sendable {
    func now() -> Date
    /// Returns at `date` (or at once if it has passed); throws when the task is cancelled.
    func sleep(until date: Date) async throws
}

/// The real clock.
package struct SystemWallClock: WallClock {
    package init() {}
    package func now() -> Date { Date() }
    package func sleep(until date: Date) async throws {
        let interval = date.timeIntervalSinceNow
        if interval > 0 { try await Task.sleep(for: .seconds(interval)) }
    }
}

/// A clock that moves only when told to: tests, and replays at full speed. Sleepers wake when
/// the clock is advanced past their time.
package final class ManualWallClock: WallClock {
    private struct State {
        var now: Date
        var sleepers: [(id: UInt64, until: Date, continuation: CheckedContinuation<Void, any Error>)] = []
        var nextID: UInt64 = 0
    }

    private let state: Mutex<State>

    package init(_ start: Date) {
        state = Mutex(State(now: start))
    }

    package func now() -> Date { state.withLock { $0.now } }

    /// Moves the clock to `date` (never backwards) and wakes everyone due by then.
    package func advance(to date: Date) {
        let due = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            state.now = max(state.now, date)
            let now = state.now
            let ready = state.sleepers.filter { $0.until <= now }
            state.sleepers.removeAll { $0.until <= now }
            return ready.map(\.continuation)
        }
        for continuation in due { continuation.resume() }
    }

    package func advance(by interval: TimeInterval) { advance(to: now().addingTimeInterval(interval)) }

    /// Tasks waiting in `sleep(until:)` now (tests wait for a loop to go back to sleep).
    package var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    package func sleep(until date: Date) async throws {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let resumeNow = state.withLock { state -> Bool in
                    if date <= state.now || Task.isCancelled { return true }
                    state.sleepers.append((id, date, continuation))
                    return false
                }
                if resumeNow {
                    if Task.isCancelled {
                        continuation.resume(throwing: CancellationError())
                    } else {
                        continuation.resume()
                    }
                }
            }
        } onCancel: {
            let cancelled = state.withLock { state -> CheckedContinuation<Void, any Error>? in
                guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else { return nil }
                return state.sleepers.remove(at: index).continuation
            }
            cancelled?.resume(throwing: CancellationError())
        }
    }

    /// Times someone is waiting for, earliest first.
    package var pendingWakeUps: [Date] { state.withLock { $0.sleepers.map(\.until).sorted() } }
}

/// Replay time: a virtual clock that starts at `virtualStart` and runs `speed` times faster than
/// real time, measured on a steady clock (a step of the system's clock moves no replay).
package struct ScaledWallClock: WallClock {
    package let virtualStart: Date
    package let realStart: Date
    package let speed: Double
    /// The real time it runs on.
    package let base: SteadyWallClock

    /// `realStart`: the real time `virtualStart` is at (default: now).
    package init(virtualStart: Date, speed: Double, realStart: Date? = nil, base: SteadyWallClock = .process) {
        self.virtualStart = virtualStart
        self.base = base
        self.realStart = realStart ?? base.now()
        self.speed = max(speed, 0.001)
    }

    package func now() -> Date {
        virtualStart.addingTimeInterval(base.now().timeIntervalSince(realStart) * speed)
    }

    package func sleep(until date: Date) async throws {
        let real = realStart.addingTimeInterval(date.timeIntervalSince(virtualStart) / speed)
        try await base.sleep(until: real)
    }
}

/// CLOCK_MONOTONIC, the clock every process on the machine shares: how a benchmark compares a time
/// one process noted with one another process noted (the fakes' timelines, its clients' receipts).
package enum MonotonicClock {
    /// Nanoseconds since boot, now.
    package static func nanoseconds() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }

    /// Nanoseconds since boot, suspended time included (CLOCK_BOOTTIME): a machine that slept has
    /// moved on by as long.
    package static func bootNanoseconds() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_BOOTTIME, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }
}
