import Clocks
import Foundation
import TestSupport
import Testing

@testable import Storage

/// A transaction whose client stops sending (its process paused: SIGSTOP, a debugger, a frozen
/// host) is ended by the server, and its locks with it, so that a stopped instance does not hold
/// every other: each connection of the store asks for that after three leases (30 s at least). The
/// transaction here asks for a second of its own (`SET LOCAL`), takes a lock, and goes idle while
/// another transaction waits for the lock.
extension ClosedConnectionTests {
    @Test func aTransactionLeftIdleIsEndedByTheServerAndItsLockFreed() async throws {
        #expect(PostgresStore.idleInTransactionMilliseconds(leaseSeconds: 20) == 60_000)
        #expect(PostgresStore.idleInTransactionMilliseconds(leaseSeconds: 4) == 30_000)
        try await PostgresStoreTests.withStores(1, leaseSeconds: 15) { stores in
            let store = stores[0]
            let logger = store.logger
            let outcome = await Deadline.result(within: .seconds(60)) {
                try await store.transaction { connection in
                    var setting = ""
                    for try await text in try await connection.query(
                        "SHOW idle_in_transaction_session_timeout", logger: logger
                    ).decode(String.self) {
                        setting = text
                    }
                    #expect(setting == "45s", "three leases of 15 s")
                    try await connection.query("SET LOCAL idle_in_transaction_session_timeout = '1s'", logger: logger)
                    try await connection.query("SELECT pg_advisory_xact_lock(5757)", logger: logger)
                    // Idle from here: the other transaction waits for the lock (its lock_timeout
                    // is 30 s) until the server ends this one's session.
                    let asked = ContinuousClock.now
                    try await store.transaction { other in
                        try await other.query("SELECT pg_advisory_xact_lock(5757)", logger: logger)
                    }
                    let waited = ContinuousClock.now - asked
                    print("idle transaction: the lock was freed after \(waited)")
                    #expect(waited < .seconds(20))
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
