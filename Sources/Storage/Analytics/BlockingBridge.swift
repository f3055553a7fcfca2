import Analytics
import Foundation
import NIOPosix
import Synchronization

/// Runs synchronous code that waits on asynchronous work, off the concurrency pool, so its waits
/// never hold one of the pool's few threads (on two cores, a query blocking the pool could starve
/// the very work it waits for).
enum BlockingBridge {
    /// The store's own pool of blocking threads (not NIO's shared one, where host lookups for the
    /// pushes wait their turn): started once, for the life of the process.
    private static let pool: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: 2)
        pool.start()
        return pool
    }()

    /// Runs `work` off the concurrency pool and returns what it returned: on the store's blocking
    /// pool, or for a `query` on a thread of its own, marked so (``QueryThread``).
    ///
    /// A query gets its own thread because it may pause on it, blocked, while another client's
    /// query takes its turn (``QueryBudget``): on a pool of fixed size, a paused query holding a
    /// thread while the query it waits for is queued behind it for a thread would wait forever.
    /// A thread costs about 20 µs to start; a query runs for milliseconds to seconds.
    static func onThread<Value: Sendable>(
        query: Bool = false, _ work: @escaping @Sendable () throws -> Value
    ) async throws -> Value {
        guard query else { return try await pool.runIfActive(work) }
        return try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                QueryThread.markCurrent()
                continuation.resume(with: Result { try work() })
            }
            thread.stackSize = 8 << 20
            thread.start()
        }
    }

    /// Waits for `operation` (only from a thread `onThread` gave): a synchronous caller's bridge
    /// into the concurrency pool.
    static func wait<Value: Sendable>(_ operation: @escaping @Sendable () async throws -> Value) throws -> Value {
        let semaphore = DispatchSemaphore(value: 0)
        let outcome = Mutex<Result<Value, any Error>?>(nil)
        // Unstructured because the caller is not async: a blocked thread outside the pool can only
        // start the work as a task and wait for its signal.
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
