import Alerts
import Foundation
import Testing

/// `keepChannel`: a broadcast channel's intent is given the channel's id only while it is active
/// and still the intent, in every store: a keep landing after a sweep ended the intent, or after
/// an earlier keep, changes nothing.
extension DeviceStoreContractTests {
    @Test(arguments: StoreFactory.available)
    func aChannelIsKeptOnlyByItsActiveIntent(factory: StoreFactory) async throws {
        try await factory.withStore { (store: any ContractStore) async throws in
            func channel(_ id: String) -> DeviceChannel {
                .liveActivityChannel(
                    id: id, bid: "CHA202008250-home", environment: .production, topic: "com.example.nohit")
            }
            let intent = Fixtures.device(channel("making-1"))
            try await store.register(intent)
            let later = Fixtures.start.addingTimeInterval(30)

            #expect(
                try await store.keepChannel(id: intent.id, address: "making-2", to: channel("A"), at: later) == false)
            #expect(try await store.keepChannel(id: UUID(), address: "making-1", to: channel("A"), at: later) == false)
            #expect(try await store.device(id: intent.id)?.channel == channel("making-1"))

            #expect(try await store.keepChannel(id: intent.id, address: "making-1", to: channel("A"), at: later))
            #expect(try await store.device(id: intent.id)?.channel == channel("A"))
            // Kept already: a second keep (a round given up on, landing late) changes nothing.
            #expect(
                try await store.keepChannel(id: intent.id, address: "making-1", to: channel("B"), at: later) == false)
            #expect(try await store.device(id: intent.id)?.channel == channel("A"))

            // An intent ended (a sweep took it for a stop's) is not brought back.
            let ended = Fixtures.device(channel("making-3"))
            try await store.register(ended)
            #expect(try await store.disable(id: ended.id, reason: "broadcast channel not made", at: later))
            #expect(
                try await store.keepChannel(id: ended.id, address: "making-3", to: channel("C"), at: later) == false)
            let stored = try #require(try await store.device(id: ended.id))
            #expect(stored.status != .active && stored.channel == channel("making-3"))
        }
    }
}
