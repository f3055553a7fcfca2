import AsyncHTTPClient
import Foundation
import NIOCore

/// How a provider's answer, or a transport's failure, becomes a ``ProviderOutcome``: one place for
/// every channel, so that a timeout or a lost connection means the same whichever way a request
/// travelled.
package enum OutcomeClassifier {
    /// APNs statuses and reasons, per Apple's documentation.
    package static func apns(status: Int, body: ByteBuffer, retryAfter: String?) -> ProviderOutcome {
        if status == 200 { return .accepted }
        let json = (try? JSONSerialization.jsonObject(with: Data(body.readableBytesView))) as? [String: Any]
        let reason = json?["reason"] as? String ?? "HTTP \(status)"
        switch status {
        case 410:
            let since = (json?["timestamp"] as? NSNumber).map { Date(timeIntervalSince1970: $0.doubleValue / 1000) }
            return .gone(reason: reason, since: since)
        // A broadcast channel APNs no longer has is gone as a token is.
        case 400 where ["BadDeviceToken", "DeviceTokenNotForTopic", "ChannelNotRegistered"].contains(reason):
            return .gone(reason: reason, since: nil)
        case 403 where reason == "ExpiredProviderToken":
            return .expiredProviderToken
        case 400 where ProviderOutcome.configurationReasons[reason] != nil,
            403 where ProviderOutcome.configurationReasons[reason] != nil:
            return .misconfigured(reason: reason)
        case 429, 500...599:
            return .transient(reason: "\(status) \(reason)", retryAfter: retryAfter.flatMap(TimeInterval.init))
        default:
            return .rejected(status: status, reason: reason)
        }
    }

    /// A push service's (RFC 8030) or a webhook receiver's answer. `goneStatuses` are those that
    /// mean the `thing` (subscription, endpoint) no longer exists. A redirect is never followed:
    /// it fails the delivery, naming where it pointed.
    package static func web(
        status: Int, retryAfter: String?, location: String?, goneStatuses: Set<Int>, thing: String
    ) -> ProviderOutcome {
        switch status {
        case 200...299: return .accepted
        case let gone where goneStatuses.contains(gone): return .gone(reason: "\(thing) gone (\(status))", since: nil)
        case 300...399:
            let target = location.map { " to \(String($0.prefix(200)))" } ?? ""
            return .rejected(status: status, reason: "HTTP \(status) (redirect\(target) not followed)")
        case 429, 500...599:
            return .transient(reason: "HTTP \(status)", retryAfter: retryAfter.flatMap(TimeInterval.init))
        default:
            return .rejected(status: status, reason: "HTTP \(status)")
        }
    }

    /// A failure of the lean HTTP/2 client.
    package static func failure(_ failure: HTTP2Client.Failure) -> ProviderOutcome {
        switch failure {
        case .timedOut: .transient(reason: "timed out", retryAfter: nil)
        case .notSent: OutboundDelivery.notSent
        case .notProcessed(let why), .connectionLost(let why): .connectionLost(reason: why)
        case .streamReset(let code): .connectionLost(reason: "stream reset (\(code))")
        case .cannotConnect(let why): .transient(reason: "cannot connect: \(why)", retryAfter: nil)
        case .refused(let refusal) where refusal.isInternal:
            .gone(reason: "endpoint refused: \(refusal)", since: nil)
        case .refused(let refusal): .transient(reason: "\(refusal)", retryAfter: nil)
        case .notHTTP2(let chosen):
            .transient(reason: "cannot connect: the server does not speak HTTP/2 (ALPN: \(chosen))", retryAfter: nil)
        case .badURL(let url): .rejected(status: 0, reason: "bad URL \(url)")
        }
    }

    /// A failure of the HTTP/1.1 client. An endpoint that resolves only into internal networks
    /// is gone (the device is pruned); one that does not resolve may come back.
    package static func failure(_ failure: HTTP1Client.Failure) -> ProviderOutcome {
        switch failure {
        case .badURL(let url): .gone(reason: "not an https URL: \(url)", since: nil)
        case .refused(let refusal) where refusal.isInternal:
            .gone(reason: "endpoint refused: \(refusal)", since: nil)
        case .refused(let refusal): .transient(reason: "\(refusal)", retryAfter: nil)
        case .cannotConnect(let why): .transient(reason: "cannot connect: \(why)", retryAfter: nil)
        case .timedOut: .transient(reason: "timed out", retryAfter: nil)
        case .connectionLost(let why): .connectionLost(reason: why)
        }
    }

    /// A failure of AsyncHTTPClient: a deadline is a stall (retry later); a connection that went
    /// away (GOAWAY, reset) is resent at once on a new one.
    package static func failure(_ error: any Error) -> ProviderOutcome {
        if let error = error as? HTTPClientError,
            error == .deadlineExceeded || error == .readTimeout || error == .connectTimeout
        {
            return .transient(reason: "timed out (\(error))", retryAfter: nil)
        }
        return .connectionLost(reason: "\(error)")
    }
}
