import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Runs synchronous code that waits on asynchronous work: on a thread of its own, outside the
/// concurrency pool, so its waits never hold one of the pool's few threads (on two cores, a
/// query blocking the pool could starve the very work it waits for).
enum BlockingBridge {
    /// Runs `work` on a new thread and returns what it returned. A `query`'s thread runs at a
    /// lower priority than the service's (nice 10): a long scan takes the CPU the event loops
    /// leave, and the server's answers to everyone else stay quick while it runs.
    static func onThread<Value: Sendable>(
        query: Bool = false, _ work: @escaping @Sendable () throws -> Value
    ) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                if query { lowerThisThreadsPriority() }
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

/// Makes the calling thread yield the CPU to the process's other threads (nice 10 on Linux, where
/// the nice value is a thread's and `who` 0 is the calling thread; a thread of its own, since an
/// unprivileged process cannot raise it back).
func lowerThisThreadsPriority() {
    #if os(Linux)
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 10)
    #endif
}
