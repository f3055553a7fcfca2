import Alerts
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// Where and how to reach APNs.
package struct APNsConfiguration: Sendable {
    /// `https://api.push.apple.com` in production, `https://api.sandbox.push.apple.com` for the
    /// sandbox; `nohit fake-apns`'s URL in tests and the demo.
    package var productionURL: String
    package var sandboxURL: String
    /// Each request's deadline; a stall past it is retried.
    package var timeout: TimeAmount

    package init(
        productionURL: String = "https://api.push.apple.com", sandboxURL: String = "https://api.sandbox.push.apple.com",
        timeout: TimeAmount = .seconds(10)
    ) {
        self.productionURL = productionURL
        self.sandboxURL = sandboxURL
        self.timeout = timeout
    }
}

/// APNs over HTTP/2: alerts and Live Activity updates, authenticated with the shared provider
/// token, `apns-id` the delivery id, a collapse id per bid.
package struct APNsChannel: DeliveryChannel {
    package let kind: ChannelKind
    let client: HTTPClient
    let configuration: APNsConfiguration
    let token: APNsProviderToken

    /// `kind` is `.apns` for alerts or `.liveActivity` for Live Activity updates.
    package init(
        kind: ChannelKind = .apns, client: HTTPClient, configuration: APNsConfiguration, token: APNsProviderToken
    ) {
        self.kind = kind
        self.client = client
        self.configuration = configuration
        self.token = token
    }

    package func refreshCredentials() async {
        if let current = try? await token.current() { _ = try? await token.refresh(after: current) }
    }

    package func deliver(_ delivery: OutboundDelivery) async -> ProviderOutcome {
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
            return .rejected(status: 0, reason: "not an APNs device")
        }
        let bearer: String
        do {
            bearer = try await token.current()
        } catch {
            return .transient(reason: "cannot sign the provider token: \(error)", retryAfter: nil)
        }
        let base = environment == .production ? configuration.productionURL : configuration.sandboxURL
        var request = HTTPClientRequest(url: "\(base)/3/device/\(deviceToken)")
        request.method = .POST
        request.headers.add(name: "authorization", value: "bearer \(bearer)")
        request.headers.add(name: "apns-topic", value: topic)
        request.headers.add(name: "apns-push-type", value: pushType)
        request.headers.add(name: "apns-priority", value: "10")
        request.headers.add(name: "apns-expiration", value: "\(Int(delivery.expiresAt.timeIntervalSince1970))")
        request.headers.add(name: "apns-id", value: delivery.id.uuidString.lowercased())
        request.headers.add(name: "apns-collapse-id", value: String(delivery.collapseKey.utf8.prefix(64))!)
        request.headers.add(name: "content-type", value: "application/json")
        request.body = .bytes(ByteBuffer(bytes: delivery.payload))
        do {
            let response = try await client.execute(request, timeout: configuration.timeout)
            let body = try await response.body.collect(upTo: 64 * 1024)
            return Self.classify(status: Int(response.status.code), body: body, headers: response.headers)
        } catch {
            return Self.classify(error)
        }
    }

    /// APNs statuses and reasons, per Apple's documentation.
    package static func classify(status: Int, body: ByteBuffer, headers: HTTPHeaders) -> ProviderOutcome {
        if status == 200 { return .accepted }
        let json = (try? JSONSerialization.jsonObject(with: Data(body.readableBytesView))) as? [String: Any]
        let reason = json?["reason"] as? String ?? "HTTP \(status)"
        switch status {
        case 410:
            let since = (json?["timestamp"] as? NSNumber).map { Date(timeIntervalSince1970: $0.doubleValue / 1000) }
            return .gone(reason: reason, since: since)
        case 400 where reason == "BadDeviceToken" || reason == "DeviceTokenNotForTopic":
            return .gone(reason: reason, since: nil)
        case 403 where reason == "ExpiredProviderToken":
            return .expiredProviderToken
        case 429, 500...599:
            return .transient(
                reason: "\(status) \(reason)", retryAfter: headers.first(name: "retry-after").flatMap(TimeInterval.init)
            )
        default:
            return .rejected(status: status, reason: reason)
        }
    }

    /// Transport failures: a deadline is a stall (retry later); a connection that went away
    /// (GOAWAY, reset) is resent at once on a new one.
    package static func classify(_ error: any Error) -> ProviderOutcome {
        if let error = error as? HTTPClientError,
            error == .deadlineExceeded || error == .readTimeout
                || error == .connectTimeout
        {
            return .transient(reason: "timed out (\(error))", retryAfter: nil)
        }
        return .connectionLost(reason: "\(error)")
    }
}
