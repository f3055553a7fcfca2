import Clocks
import Foundation
import Logging
import Synchronization

/// Whether the database takes writes, as the service's own writes find it: a write refused for a
/// reason of the machine (``StorageFault``: a full disk, an I/O error) makes it failing until a
/// write succeeds again. The service's loops write through ``persist(_:_:)``, which waits the
/// fault out and tries the same write again (nothing they could not store is passed over); the
/// API reports the writes it refuses. `/readyz` says degraded while it fails, the metrics count the
/// failures, and the log says it once when it begins and once when it ends.
///
/// Waits are measured on the monotonic clock (a step of the wall clock neither shortens nor
/// lengthens them).
package final class StorageHealth: Sendable {
    /// A spell of failing writes.
    package struct Failing: Sendable, Hashable {
        package var fault: StorageFault
        /// When it began (wall time, for people).
        package var since: Date
        /// Writes refused since it began.
        package var failures: Int
        /// What last failed: `a moment and its alerts`, `delivery outcomes`, `analytics events`.
        package var what: String
    }

    private struct State {
        var failing: Failing?
        /// When the last write failed: a spell seen only in the API's writes (nothing of the
        /// service's waits to find that the disk has room again) ends `forgetAfter` after it.
        var lastFailure: ContinuousClock.Instant?
        var failures = 0
    }

    private let state = Mutex(State())
    private let logger: Logger
    /// How long a spell lasts after its last failure when no write has succeeded since.
    let forgetAfter: Duration
    /// The first wait before a write is tried again, and the longest.
    let firstWait: Duration
    let longestWait: Duration
    /// How long one attempt may take before it counts as a fault (the database not answering)
    /// and is tried again, or nil for no limit. For PostgreSQL: a call in flight when the server
    /// went away has been seen never to return; the attempt left behind holds its connection.
    let attemptLimit: Duration?

    package init(
        logger: Logger = Logger(label: "nohit.storage"), forgetAfter: Duration = .seconds(60),
        firstWait: Duration = .milliseconds(250), longestWait: Duration = .seconds(5), attemptLimit: Duration? = nil
    ) {
        self.logger = logger
        self.attemptLimit = attemptLimit
        self.forgetAfter = forgetAfter
        self.firstWait = firstWait
        self.longestWait = longestWait
    }

    /// The spell of failing writes under way, nil when the database takes writes.
    package var failing: Failing? {
        state.withLock { state in
            guard let failing = state.failing, let last = state.lastFailure else { return nil }
            return ContinuousClock.now - last < forgetAfter ? failing : nil
        }
    }

    /// Writes refused for a fault of the machine since start.
    package var failures: Int { state.withLock { $0.failures } }

    /// A write of `what` was refused for `fault`. The first of a spell is logged, with what it means.
    package func failed(_ fault: StorageFault, what: String) {
        let begins = state.withLock { state -> Bool in
            state.failures += 1
            state.lastFailure = .now
            if var failing = state.failing, failing.fault.kind == fault.kind {
                failing.failures += 1
                failing.what = what
                state.failing = failing
                return false
            }
            state.failing = Failing(fault: fault, since: Date(), failures: 1, what: what)
            return true
        }
        if begins {
            logger.error(
                Logger.Message(
                    stringLiteral:
                        "cannot store \(what): \(fault); the service keeps what it has not stored and tries again every few "
                        + "seconds, the API refuses writes with 503, and /readyz says degraded until it can store again"
                ),
                metadata: ["fault": "\(fault.kind.rawValue)"])
        }
    }

    /// A write succeeded: a spell of failures, if any, is over (and said to be).
    package func succeeded() {
        let ended = state.withLock { state -> Failing? in
            defer { state.failing = nil }
            return state.failing
        }
        if let ended {
            logger.notice(
                Logger.Message(
                    stringLiteral:
                        "the database takes writes again after \(Int(Date().timeIntervalSince(ended.since).rounded())) s "
                        + "(\(ended.failures) \(ended.failures == 1 ? "write" : "writes") refused meanwhile, each tried "
                        + "again or refused to its client)"))
        }
    }

    /// Runs `write` until it is done: a ``StorageFault`` is noted and the same write tried again
    /// after a wait (a quarter of a second, doubling to five); any other error is thrown, as is
    /// cancellation while it waits. Once `stopping` says the service is stopping, a fault is thrown
    /// instead of waited out: what could not be stored is left as it is in the database (a
    /// delivery in flight is sent again at the next start, with the same ids).
    ///
    /// `isWrite` false: a read made through the same waits (it says nothing of whether the
    /// database takes writes, so it ends no spell of failures).
    package func persist<T: Sendable>(
        _ what: String, isWrite: Bool = true, stopping: () -> Bool = { false },
        _ write: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        var wait = firstWait
        while true {
            do {
                let value = try await attempt(write)
                if isWrite { succeeded() }
                return value
            } catch {
                guard let fault = StorageFault(error) else { throw error }
                failed(fault, what: what)
                logger.debug("trying again", metadata: ["what": "\(what)", "fault": "\(fault)"])
                if stopping() { throw fault }
                try await Task.sleep(for: wait)
                wait = min(wait * 2, longestWait)
            }
        }
    }

    /// One attempt of `write`, within `attemptLimit` if there is one.
    private func attempt<T: Sendable>(_ write: @escaping @Sendable () async throws -> T) async throws -> T {
        guard let attemptLimit else { return try await write() }
        guard let result = await Deadline.result(within: attemptLimit, write) else {
            throw StorageFault(.unreachable, detail: "no answer within \(attemptLimit)")
        }
        return try result.get()
    }
}
