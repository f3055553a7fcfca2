import Synchronization

/// Work raced against a deadline.
package enum Deadline {
    /// What `body` gave, or nil when it did not end within `limit`. The answer does not wait for a
    /// body that ignores cancellation: it is cancelled and left to finish on its own.
    ///
    /// Unstructured on purpose: a task group (or `async let`) waits for every child before it
    /// returns, so a body stuck in a call that does not heed cancellation (a database ping blocked
    /// behind a lock, a read on a socket that never answers) would hold the answer back past its
    /// deadline, which is the one thing this must not do.
    package static func result<Value: Sendable>(
        within limit: Duration, _ body: @escaping @Sendable () async throws -> Value
    ) async -> Result<Value, any Error>? {
        let race = Race<Value>()
        return await withCheckedContinuation { continuation in
            race.waiting.withLock { $0 = continuation }
            let work = Task {
                let result: Result<Value, any Error>
                do {
                    result = .success(try await body())
                } catch {
                    result = .failure(error)
                }
                race.waiting.withLock { $0.take() }?.resume(returning: result)
                race.timer.withLock { $0?.cancel() }
            }
            race.timer.withLock {
                $0 = Task {
                    try? await Task.sleep(for: limit)
                    if let waiting = race.waiting.withLock({ $0.take() }) {
                        work.cancel()
                        waiting.resume(returning: nil)
                    }
                }
            }
        }
    }

    /// Who answers first: the work or its deadline.
    private final class Race<Value: Sendable>: Sendable {
        let waiting = Mutex<CheckedContinuation<Result<Value, any Error>?, Never>?>(nil)
        let timer = Mutex<Task<Void, Never>?>(nil)
    }
}
