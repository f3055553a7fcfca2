import Foundation
import Testing

/// Deliveries held for a configuration the provider refused (issue 58, item 3): neither claimed
/// nor failed nor waited on by a draining replay, counted apart, and pending again — due at once
/// under their own ids — when the next start releases them.
@Suite struct HeldDeliveriesTests {
    @Test(arguments: StoreFactory.available)
    func aHeldDeliveryWaitsForTheNextStart(factory: StoreFactory) async throws {
        try await factory.withStore { (store: any ContractStore) async throws in
            let phones = [Fixtures.device(Fixtures.apns), Fixtures.device(Fixtures.apns)]
            for phone in phones { try await store.register(phone) }
            let moment = Fixtures.moment()
            let due = moment.occurredAt
            try await store.record(
                moment, payloads: Fixtures.payloads(moment), deliveries: Fixtures.deliveries(moment, to: phones))
            let claimed = try await store.claim(channel: .apns, now: due, limit: 10)
            #expect(claimed.count == 2)
            try await store.complete([
                .held(id: claimed[0].id, reason: "InvalidProviderToken", at: due),
                .delivered(id: claimed[1].id, at: due),
            ])
            var counts = try await store.outboxCounts()
            #expect(counts.held == 1 && counts.delivered == 1 && counts.failed == 0 && counts.pending == 0)
            // Not claimed again, not waited for, not failed.
            #expect(try await store.claim(channel: .apns, now: due.addingTimeInterval(86_400), limit: 10).isEmpty)
            #expect(try await store.hasUnfinished(channels: [.apns], dueBy: nil) == false)
            #expect(try await store.nextDue(channel: .apns) == nil)
            #expect(try await store.failedDeliveries(limit: 10).recent.isEmpty)
            #expect(try await store.rows().first { $0.id == claimed[0].id }?.error == "InvalidProviderToken")
            // The next start: pending again, due then, under the same id.
            let restart = due.addingTimeInterval(600)
            #expect(try await store.releaseHeld(now: restart) == 1)
            #expect(try await store.releaseHeld(now: restart) == 0)
            counts = try await store.outboxCounts()
            #expect(counts.held == 0 && counts.pending == 1)
            #expect(try await store.nextDue(channel: .apns) == restart)
            let again = try await store.claim(channel: .apns, now: restart, limit: 10)
            #expect(again.map(\.id) == [claimed[0].id])
            // Held again, and released only after the alert expired (30 minutes after its moment):
            // failed, saying so, not sent.
            try await store.complete([.held(id: again[0].id, reason: "InvalidProviderToken", at: restart)])
            #expect(try await store.releaseHeld(now: due.addingTimeInterval(3600)) == 0)
            counts = try await store.outboxCounts()
            #expect(counts.held == 0 && counts.pending == 0 && counts.failed == 1 && counts.delivered == 1)
            #expect(
                try await store.failedDeliveries(limit: 10).recent.map(\.reason) == [
                    "expired while held: InvalidProviderToken"
                ])
        }
    }
}
