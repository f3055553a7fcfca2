import Synchronization

/// How late this process's timers woke while it was watched: a task sleeps 50 ms again and again
/// and keeps the most it overslept. A test that checks a deadline fired near its time allows this
/// much more, so that a starved run (a build beside it has held the tests' threads off the CPU
/// for over a minute) does not read as a deadline missed, while a deadline that did not fire at
/// all still fails.
package final class SchedulingLag: Sendable {
    private let most = Mutex(Duration.zero)
    private let watching = Mutex<Task<Void, Never>?>(nil)

    package init() {
        let tick = Duration.milliseconds(50)
        let task = Task.detached { [self] in
            while !Task.isCancelled {
                let asked = ContinuousClock.now
                try? await Task.sleep(for: tick)
                let late = ContinuousClock.now - asked - tick
                most.withLock { $0 = Swift.max($0, late) }
            }
        }
        watching.withLock { $0 = task }
    }

    /// The longest a timer woke late so far.
    package var worst: Duration { most.withLock { $0 } }

    package func stop() { watching.withLock { $0?.cancel() } }
}
