import Foundation
import TestSupport
import Testing

@testable import Storage

/// A transaction whose client stops answering (its process paused) is ended by the server after
/// half a lease (5 s at least), so its locks do not stop the other instances: every connection of
/// the store asks for it at its start. (What a paused instance then meets going on is the extended
/// paused-instance test's, `InstancesTests`.)
extension PostgresStoreTests {
    @Test func everyConnectionEndsATransactionLeftIdleForHalfALease() async throws {
        #expect(PostgresStore.idleInTransactionMilliseconds(leaseSeconds: 20) == 10_000)
        #expect(PostgresStore.idleInTransactionMilliseconds(leaseSeconds: 4) == 5_000)
        try await Self.withStores(1, leaseSeconds: 30) { stores in
            let setting = try await stores[0].transaction { connection in
                var value = ""
                for try await text in try await connection.query(
                    "SHOW idle_in_transaction_session_timeout", logger: .init(label: "test")
                ).decode(String.self) {
                    value = text
                }
                return value
            }
            #expect(setting == "15s")
        }
    }
}
