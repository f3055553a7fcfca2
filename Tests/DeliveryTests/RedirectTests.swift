import Alerts
import Crypto
import Delivery
import Foundation
import NIOCore
import Testing

/// An endpoint that answers with a redirect into the service's own network: the request is a
/// failed delivery, never sent on. The internal listener the redirect names must see nothing.
@Suite(.serialized) struct RedirectTests {
    typealias Harness = ChannelIntegrationTests.Harness

    static func harness(redirectingTo listener: LoopbackListener) async throws -> Harness {
        try await Harness(redirectLocation: "http://127.0.0.1:\(listener.port)/internal")
    }

    @Test func aWebhookThatRedirectsIsNotFollowed() async throws {
        let listener = try await LoopbackListener.start()
        let harness = try await Self.harness(redirectingTo: listener)
        let channel = harness.webhook()
        let endpoint = harness.server.state.webhookEndpoint(id: "307-hook", baseURL: harness.server.baseURL)
        let delivery = ChannelIntegrationTests.delivery(token: "") { _ in
            .webhook(url: endpoint.url, secret: endpoint.secret)
        }
        try await Self.expectNotFollowed(
            await channel.deliver(delivery), listener: listener,
            harness: harness)
    }

    @Test(arguments: ChannelIntegrationTests.APNsTransportKind.allCases)
    func aPushServiceThatRedirectsIsNotFollowed(transport: ChannelIntegrationTests.APNsTransportKind) async throws {
        let listener = try await LoopbackListener.start()
        let harness = try await Self.harness(redirectingTo: listener)
        let (channel, _) = harness.webPush(transport: transport)
        let subscription = harness.server.state.subscribe(id: "307-push", baseURL: harness.server.baseURL)
        let delivery = ChannelIntegrationTests.delivery(token: "") { _ in
            .webPush(endpoint: subscription.endpoint, p256dh: subscription.p256dh, auth: subscription.auth)
        }
        try await Self.expectNotFollowed(
            await channel.deliver(delivery), listener: listener,
            harness: harness)
    }

    /// The redirect is a failed delivery naming where it pointed, and nothing reached its target.
    static func expectNotFollowed(_ outcome: ProviderOutcome, listener: LoopbackListener, harness: Harness)
        async throws
    {
        let target = "http://127.0.0.1:\(listener.port)/internal"
        #expect(outcome == .rejected(status: 307, reason: "HTTP 307 (redirect to \(target) not followed)"))
        #expect(listener.connections == 0)
        try await harness.shutdown()
        try await listener.close()
    }
}
