import Alerts
import AsyncHTTPClient
import Foundation
import NIOCore

/// Web Push (RFC 8030): the payload encrypted for the subscription (RFC 8291), the server
/// identified with VAPID (RFC 8292).
package struct WebPushChannel: DeliveryChannel {
    package let kind = ChannelKind.webPush
    let client: HTTPClient
    let vapid: VAPIDAuthorizations
    let clock: any WallClock
    let timeout: TimeAmount

    package init(client: HTTPClient, vapid: VAPID, clock: any WallClock, timeout: TimeAmount = .seconds(10)) {
        self.client = client
        self.vapid = VAPIDAuthorizations(vapid: vapid)
        self.clock = clock
        self.timeout = timeout
    }

    package func deliver(_ delivery: OutboundDelivery) async -> ProviderOutcome {
        guard case .webPush(let endpoint, let p256dh, let auth) = delivery.channel, let url = URL(string: endpoint),
            let key = Base64URL.decode(p256dh), let secret = Base64URL.decode(auth)
        else { return .gone(reason: "not a valid Web Push subscription", since: nil) }
        let body: Data
        let authorization: String
        do {
            body = try WebPushEncryption.encrypt(delivery.payload, p256dh: key, auth: secret)
            authorization = try vapid.authorization(endpoint: url, now: clock.now())
        } catch let failure as WebPushEncryption.Failure {
            return failure == .tooLarge(delivery.payload.count)
                ? .rejected(status: 413, reason: "\(failure)") : .gone(reason: "\(failure)", since: nil)
        } catch {
            return .rejected(status: 0, reason: "cannot sign: \(error)")
        }
        var request = HTTPClientRequest(url: endpoint)
        request.method = .POST
        let ttl = max(0, Int(delivery.expiresAt.timeIntervalSince(clock.now())))
        request.headers.add(name: "ttl", value: "\(ttl)")
        request.headers.add(name: "urgency", value: "high")
        // Topic: at most 32 base64url characters; a bid's alerts replace each other while pending.
        request.headers.add(name: "topic", value: String(Base64URL.encode(Data(delivery.collapseKey.utf8)).prefix(32)))
        request.headers.add(name: "content-encoding", value: "aes128gcm")
        request.headers.add(name: "content-type", value: "application/octet-stream")
        request.headers.add(name: "authorization", value: authorization)
        request.body = .bytes(ByteBuffer(bytes: body))
        do {
            let response = try await client.execute(request, timeout: timeout)
            _ = try await response.body.collect(upTo: 64 * 1024)
            let status = Int(response.status.code)
            let retryAfter = response.headers.first(name: "retry-after").flatMap(TimeInterval.init)
            switch status {
            case 200...299: return .accepted
            case 404, 410: return .gone(reason: "subscription gone (\(status))", since: nil)
            case 429, 500...599: return .transient(reason: "HTTP \(status)", retryAfter: retryAfter)
            default: return .rejected(status: status, reason: "HTTP \(status)")
            }
        } catch {
            return APNsChannel.classify(error)
        }
    }
}
