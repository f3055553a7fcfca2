import Alerts
import Foundation
import Testing

/// What every store keeps for push-to-start: the token with how its activity hears the bid, the
/// starts a device's budget has spent, and — in the transaction of the moment that ends a bid —
/// the starts of that bid still unsent, failed with the reason (an activity started for a bid
/// already over would show it alive).
@Suite struct PushToStartContractTests {
    static func starter(_ updates: ActivityUpdates = .channel) -> Device {
        Fixtures.device(
            .liveActivityStart(
                token: Fixtures.token(), environment: .production, topic: "com.example.nohit", updates: updates))
    }

    @Test(arguments: StoreFactory.available)
    func aTokenRoundTripsWithHowItsActivityHearsTheBid(factory: StoreFactory) async throws {
        try await factory.withStore { (store: any ContractStore) async throws in
            for updates in ActivityUpdates.allCases {
                let device = Self.starter(updates)
                try await store.register(device)
                #expect(try await store.device(id: device.id) == device)
                // The same token again is the same phone: the one holding it is replaced.
                var again = Self.starter(updates)
                again.channel = device.channel
                let replaced = try await store.register(again)
                #expect(replaced == [device.id])
                #expect(try await store.device(id: device.id)?.isActive == false)
            }
        }
    }

    @Test(arguments: StoreFactory.available)
    func theEndOfABidDropsItsUnsentStartsAndTheBudgetCountsTheRest(factory: StoreFactory) async throws {
        try await factory.withStore { (store: any ContractStore) async throws in
            let (sent, waiting, later) = (Self.starter(), Self.starter(.token), Self.starter())
            let phone = Fixtures.device(Fixtures.apns)
            try await store.register(contentsOf: [sent, waiting, later, phone])
            let six = Fixtures.moment(.hitlessInnings, outs: 18)
            // One start due now, one waiting an hour for its device's budget; the phone's alert.
            let now = six.occurredAt
            let deliveries =
                Fixtures.deliveries(six, to: [sent, phone])
                + Fixtures.deliveries(six, to: [waiting], due: now.addingTimeInterval(3600))
            try await store.record(six, payloads: Fixtures.payloads(six), deliveries: deliveries)
            // Another game's bid: its start is not this bid's.
            let other = Fixtures.moment(.hitlessInnings, outs: 18, game: "NYA202008250")
            try await store.record(
                other, payloads: Fixtures.payloads(other),
                deliveries: Fixtures.deliveries(other, to: [later], due: now.addingTimeInterval(3600)))
            let claimed = try await store.claim(channel: .liveActivityStart, now: now, limit: 10)
            #expect(claimed.map(\.deviceID) == [sent.id])
            try await store.complete([.delivered(id: claimed[0].id, at: now)])

            // The budget: every start sent or to send, by device, due since the time asked.
            let planned = try await store.plannedStarts(since: now.addingTimeInterval(-60))
            #expect(planned[sent.id] == [now] && planned[waiting.id] == [now.addingTimeInterval(3600)])
            #expect(planned[later.id]?.count == 1 && planned[phone.id] == nil)
            #expect(
                try await store.plannedStarts(since: now.addingTimeInterval(1)).keys.sorted()
                    == [
                        waiting.id, later.id,
                    ].sorted())

            // The hit: the waiting start of this bid fails, saying why; the sent one, the other
            // bid's and the phone's alert stay as they were.
            let hit = Fixtures.moment(.brokenUp, outs: 22)
            try await store.record(hit, payloads: Fixtures.payloads(hit), deliveries: [])
            let failed = try await store.failedDeliveries(limit: 10).recent
            #expect(failed.map(\.deviceID) == [waiting.id])
            #expect(
                failed.first?.reason
                    == "not started: the bid was over (broken-up, 22 outs) before the start could go (not yet due: held "
                    + "by the device's spoiler delay or push-to-start budget)")
            #expect(try await store.plannedStarts(since: now.addingTimeInterval(-60))[waiting.id] == nil)
            let counts = try await store.outboxCounts()
            #expect(counts.startsSent == 1 && counts.startsFailed == 1)
            #expect(counts.delivered == 1 && counts.failed == 1 && counts.pending == 2)
            // Recorded again (derived after a restart): nothing more changes.
            #expect(try await store.record(hit, payloads: Fixtures.payloads(hit), deliveries: []) == false)
            #expect(try await store.outboxCounts() == counts)
        }
    }
}
