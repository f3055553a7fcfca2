import Clocks
import Foundation
import Testing

@testable import Storage

/// A transaction the server ends while it waits for its client's next statement (its
/// `idle_in_transaction_session_timeout`, which an operator may set on the role or the database;
/// here the transaction asks for a second of its own, `SET LOCAL`): its lock is freed for the
/// transaction waiting on it, and its own next statement fails at once, as the database unreachable
/// (as a paused instance would meet it, going on), instead of waiting for ever (PostgresNIO 1.33
/// drops a statement written on a closed connection: ``HeldConnection``).
extension ClosedConnectionTests {
    @Test func aTransactionLeftIdleIsEndedByTheServerAndItsLockFreed() async throws {
        try await PostgresStoreTests.withStores(1) { stores in
            let store = stores[0]
            let logger = store.logger
            // A key of this run's own: advisory locks are the whole database's.
            let key = Int64.random(in: 1...Int64(Int32.max))
            let outcome = await Deadline.result(within: .seconds(60)) {
                try await store.transaction { connection in
                    // The lock first, then the timeout (a timeout set first could end the session
                    // before the lock, on a loaded machine, and the test would show nothing).
                    try await connection.query("SELECT pg_advisory_xact_lock(\(key))", logger: logger)
                    try await connection.query("SET LOCAL idle_in_transaction_session_timeout = '1s'", logger: logger)
                    // Idle from here: the other transaction waits for the lock (its lock_timeout
                    // is 30 s) until the server ends this one's session.
                    let asked = ContinuousClock.now
                    try await store.transaction { other in
                        try await other.query("SELECT pg_advisory_xact_lock(\(key))", logger: logger)
                    }
                    let waited = ContinuousClock.now - asked
                    print("idle transaction: the lock was freed after \(waited)")
                    #expect(waited < .seconds(20))
                    // The server's close, as this client sees it (its event loop reads it).
                    let seen = ContinuousClock.now + .seconds(10)
                    while !connection.connection.isClosed && ContinuousClock.now < seen {
                        try await Task.sleep(for: .milliseconds(10))
                    }
                    #expect(connection.connection.isClosed, "the server ended the idle session")
                    // Going on, as a paused instance resumed would: its statement fails at once.
                    try await connection.query("SELECT 1", logger: logger)
                }
            }
            let result = try #require(outcome, "the transaction did not end within 60 s")
            guard case .failure(let error) = result else {
                Issue.record("a statement in a transaction the server ended was answered")
                return
            }
            #expect(StorageFault(error)?.kind == .unreachable, "\(String(reflecting: error))")
        }
    }
}
