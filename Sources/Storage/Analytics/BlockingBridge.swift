import Analytics
import Foundation
import Synchronization

/// Runs synchronous code that waits on asynchronous work: on a thread of its own, outside the
/// concurrency pool, so its waits never hold one of the pool's few threads (on two cores, a
/// query blocking the pool could starve the very work it waits for).
enum BlockingBridge {
    /// Runs `work` on a new thread and returns what it returned. A `query`'s thread is marked as
    /// its own (``QueryThread``): the query may pause on it while another client's takes its turn.
    static func onThread<Value: Sendable>(
        query: Bool = false, _ work: @escaping @Sendable () throws -> Value
    ) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                if query { QueryThread.markCurrent() }
                continuation.resume(with: Result { try work() })
            }
            thread.stackSize = 8 << 20
            thread.start()
        }
    }

    /// Waits for `operation` (only from a thread `onThread` started).
    static func wait<Value: Sendable>(_ operation: @escaping @Sendable () async throws -> Value) throws -> Value {
        let semaphore = DispatchSemaphore(value: 0)
        let outcome = Mutex<Result<Value, any Error>?>(nil)
        Task {
            let result: Result<Value, any Error>
            do {
                result = .success(try await operation())
            } catch {
                result = .failure(error)
            }
            outcome.withLock { $0 = result }
            semaphore.signal()
        }
        semaphore.wait()
        return try outcome.withLock { $0! }.get()
    }
}
