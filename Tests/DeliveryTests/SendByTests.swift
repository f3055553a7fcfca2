import Delivery
import Foundation
import Testing

/// A delivery carries the last moment it may be put on the wire (its claim's half lease): a
/// process held up past it (paused, starved) has lost the claim to another instance, and must not
/// send it beside that instance. Checked where each transport writes the request: on the HTTP/2
/// connection's event loop, and before each request of the other clients.
extension ChannelIntegrationTests {
    @Test(arguments: APNsTransportKind.allCases)
    func aDeliveryPastItsSendByIsNotSent(transport: APNsTransportKind) async throws {
        let harness = try await Harness()
        let channel = try harness.apns(transport: transport)
        let past = ContinuousClock.now - .seconds(1)
        let future = ContinuousClock.now + .seconds(600)
        var deliveries: [OutboundDelivery] = []
        for sendBy in [past, future, nil, past, future, past] {
            var delivery = Self.delivery(token: Self.token("ab"))
            delivery.sendBy = sendBy
            deliveries.append(delivery)
        }
        let received = Dictionary(
            try await Self.sendBatch(deliveries, on: channel), uniquingKeysWith: { first, _ in first })
        for (index, delivery) in deliveries.enumerated() {
            let expected = delivery.sendBy == past ? OutboundDelivery.notSent : ProviderOutcome.accepted
            #expect(received[index] == expected, "delivery \(index) (batch, \(transport))")
        }
        // One at a time too (`deliver`, the path of a push test and of channels without a batch).
        var single = Self.delivery(token: Self.token("cd"))
        single.sendBy = past
        #expect(await channel.deliver(single) == OutboundDelivery.notSent)
        let accepted = Set(harness.server.state.accepted.map(\.apnsID))
        #expect(accepted == Set(deliveries.filter { $0.sendBy != past }.map { $0.id.uuidString.lowercased() }))
        try await harness.shutdown()
    }
}
