import Alerts
import Crypto
import Delivery
import Foundation
import Synchronization

/// The fake Web Push service: subscriptions made here, pushes decrypted and VAPID checked.
extension FakeProviderState {
    /// A new subscription on this fake push service, as a browser would get from its own.
    package func subscribe(baseURL: String) -> (endpoint: String, p256dh: String, auth: String) {
        let id = UUID().uuidString.lowercased()
        return subscribe(id: id, baseURL: baseURL)
    }

    /// A subscription with a chosen id (its prefix scripts failures, as APNs tokens do:
    /// `410-` gone, `404-` not found, `429-` and `503-` fail then succeed).
    package func subscribe(id: String, baseURL: String) -> (endpoint: String, p256dh: String, auth: String) {
        let key = P256.KeyAgreement.PrivateKey()
        let auth = Data(SymmetricKey(size: .bits128).withUnsafeBytes { Array($0) })
        ledger.withLock { $0.subscriptions[id] = WebPushSubscription(id: id, key: key, auth: auth) }
        return (
            "\(baseURL)/webpush/\(id)", Base64URL.encode(key.publicKey.x963Representation), Base64URL.encode(auth)
        )
    }

    /// Answers `POST /webpush/<id>`: checks TTL, the content coding and VAPID (audience is this
    /// origin, not expired, at most 24 hours ahead), then decrypts with the subscriber's key.
    package func webPush(id: String, origin: String, headers: FakeRequestHeaders, body: Data, now: Date) -> FakeReply {
        func header(_ name: String) -> String? { headers[name] }
        ledger.withLock { $0.requests += 1 }
        let reply: FakeReply = {
            guard let subscription = ledger.withLock({ $0.subscriptions[id] }) else {
                return .json(404, ["reason": "no such subscription"])
            }
            guard let ttl = header("ttl"), Int(ttl) != nil else { return .json(400, ["reason": "TTL header required"]) }
            guard header("content-encoding") == "aes128gcm" else { return .json(415, ["reason": "aes128gcm only"]) }
            guard let authorization = header("authorization"), let claims = verifiedVAPID(authorization) else {
                return .json(401, ["reason": "VAPID authorization missing or invalid"])
            }
            guard claims["aud"] as? String == origin else {
                return .json(403, ["reason": "VAPID audience is not \(origin)"])
            }
            guard let expiry = claims["exp"] as? Int, Double(expiry) > now.timeIntervalSince1970,
                Double(expiry) <= now.timeIntervalSince1970 + 86_400
            else { return .json(403, ["reason": "VAPID token expired or too far ahead"]) }
            guard body.count <= 4096 else { return .json(413, ["reason": "payload too large"]) }
            let attempt = ledger.withLock { ledger -> Int in
                ledger.attempts["webpush:" + id + ":" + String(body.count), default: 0] += 1
                return ledger.attempts["webpush:" + id + ":" + String(body.count)]!
            }
            if id.hasPrefix("410-") { return .json(410, ["reason": "subscription expired"]) }
            if id.hasPrefix("307-") {
                return .json(307, ["reason": "moved"], headers: [("location", configuration.redirectLocation)])
            }
            if id.hasPrefix("404-") { return .json(404, ["reason": "subscription not found"]) }
            if id.hasPrefix("429-") && attempt <= configuration.failuresBeforeSuccess {
                return .json(429, ["reason": "slow down"], headers: [("retry-after", "1")])
            }
            if id.hasPrefix("503-") && attempt <= configuration.failuresBeforeSuccess {
                return .json(503, ["reason": "unavailable"])
            }
            guard
                let plaintext = try? WebPushEncryption.decrypt(
                    body, receiverKey: subscription.key, auth: subscription.auth)
            else { return .json(400, ["reason": "cannot decrypt with the subscription's keys"]) }
            ledger.withLock { $0.subscriptions[id]?.messages.append(plaintext) }
            return .respond(status: 201, headers: [("location", "\(origin)/webpush/\(id)/messages")], body: Data())
        }()
        if case .respond(let status, _, _) = reply { ledger.withLock { $0.statuses[status, default: 0] += 1 } }
        return reply
    }

    /// The claims of a VAPID `authorization` header whose signature checks out, or nil. A sender
    /// reuses one header for many pushes (RFC 8292 allows it): a header already verified is not
    /// verified again; its expiry is still checked on every request.
    func verifiedVAPID(_ authorization: String) -> [String: any Sendable]? {
        if let claims = ledger.withLock({ $0.verifiedVAPID[authorization] }) { return claims }
        guard let vapid = VAPID.parse(authorization: authorization),
            let claims = try? VAPID.verify(token: vapid.token, key: vapid.key)
        else { return nil }
        ledger.withLock { ledger in
            if ledger.verifiedVAPID.count >= 1024 { ledger.verifiedVAPID.removeAll() }
            ledger.verifiedVAPID[authorization] = claims
        }
        return claims
    }

    /// The decrypted messages a subscription received.
    package func webPushMessages(id: String) -> [Data]? {
        ledger.withLock { $0.subscriptions[id]?.messages }
    }

    package var requestCount: Int { ledger.withLock { $0.requests } }
}
