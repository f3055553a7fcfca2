import Alerts
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// APNs over HTTP/2: alerts and Live Activity updates, authenticated with the shared provider
/// token, `apns-id` the delivery id, a collapse id per bid.
package struct APNsChannel: DeliveryChannel {
    package let kind: ChannelKind
    let transport: any APNsTransport
    let token: APNsProviderToken

    /// `kind` is `.apns` for alerts or `.liveActivity` for Live Activity updates.
    package init(kind: ChannelKind = .apns, transport: any APNsTransport, token: APNsProviderToken) {
        self.kind = kind
        self.transport = transport
        self.token = token
    }

    /// Over AsyncHTTPClient.
    package init(
        kind: ChannelKind = .apns, client: HTTPClient, configuration: APNsConfiguration, token: APNsProviderToken
    ) {
        self.init(
            kind: kind, transport: AsyncHTTPClientAPNsTransport(client: client, configuration: configuration),
            token: token)
    }

    package func refreshCredentials() async -> Bool {
        (try? token.refreshRejected()) ?? false
    }

    /// Notes which provider token an ExpiredProviderToken answer refused, so that the refresh
    /// replaces that token once, not once per refused request.
    private func noting(_ outcome: ProviderOutcome, sentWith bearer: String) -> ProviderOutcome {
        if outcome == .expiredProviderToken { token.reject(bearer) }
        return outcome
    }

    /// The provider token to send with, or what every delivery meets when it cannot be signed.
    private func bearer() -> Result<String, Refusal> {
        do {
            return .success(try token.current())
        } catch {
            return .failure(
                Refusal(outcome: .transient(reason: "cannot sign the provider token: \(error)", retryAfter: nil)))
        }
    }

    package func deliver(_ delivery: OutboundDelivery) async -> ProviderOutcome {
        let bearer: String
        switch self.bearer() {
        case .failure(let refusal): return refusal.outcome
        case .success(let signed): bearer = signed
        }
        switch request(for: delivery, bearer: bearer) {
        case .failure(let refusal):
            return refusal.outcome
        case .success(let request):
            return noting(await transport.send(request), sentWith: bearer)
        }
    }

    /// One provider token for the whole batch, then every request to the transport at once.
    package func send(_ deliveries: [OutboundDelivery], report: @escaping OutcomeReport) async {
        let bearer: String
        switch self.bearer() {
        case .failure(let refusal):
            for index in deliveries.indices { report(index, refusal.outcome) }
            return
        case .success(let signed): bearer = signed
        }
        var requests: [APNsRequest] = []
        var indices: [Int] = []
        requests.reserveCapacity(deliveries.count)
        indices.reserveCapacity(deliveries.count)
        for (index, delivery) in deliveries.enumerated() {
            switch request(for: delivery, bearer: bearer) {
            case .failure(let refusal): report(index, refusal.outcome)
            case .success(let request):
                requests.append(request)
                indices.append(index)
            }
        }
        let positions = indices
        await transport.send(requests) { index, outcome in
            report(positions[index], noting(outcome, sentWith: bearer))
        }
    }

    private struct Refusal: Error {
        var outcome: ProviderOutcome
    }

    /// The request for `delivery`: `apns-id` the delivery id, a collapse id per bid.
    private func request(for delivery: OutboundDelivery, bearer: String) -> Result<APNsRequest, Refusal> {
        let deviceToken: String
        let environment: APNsEnvironment
        var topic: String
        let pushType: String
        switch delivery.channel {
        case .apns(let token, let env, let bundle):
            (deviceToken, environment, topic, pushType) = (token, env, bundle, "alert")
        case .liveActivity(let token, let env, let bundle):
            (deviceToken, environment, topic, pushType) = (token, env, bundle, "liveactivity")
            topic += ".push-type.liveactivity"
        default:
            return .failure(Refusal(outcome: .rejected(status: 0, reason: "not an APNs device")))
        }
        let headers = [
            ("authorization", "bearer \(bearer)"),
            ("apns-topic", topic),
            ("apns-push-type", pushType),
            ("apns-priority", "10"),
            ("apns-expiration", String(Int(delivery.expiresAt.timeIntervalSince1970))),
            ("apns-id", delivery.id.text()),
            ("apns-collapse-id", String(delivery.collapseKey.utf8.prefix(64))!),
            ("content-type", "application/json"),
        ]
        return .success(
            APNsRequest(
                environment: environment, deviceToken: deviceToken, headers: headers,
                body: ByteBuffer(bytes: delivery.payload)))
    }
}
