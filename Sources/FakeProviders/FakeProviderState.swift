import Alerts
import Crypto
import Delivery
import Foundation
import Synchronization

/// How the fake provider behaves.
package struct FakeProviderConfiguration: Sendable {
    /// The APNs provider key the JWTs must verify with.
    package var verificationKey: P256.Signing.PublicKey
    /// When set, the JWT's `kid` and `iss` must match.
    package var keyID: String?
    package var teamID: String?
    /// A JWT older than this is expired (Apple: one hour).
    package var maximumTokenAge: TimeInterval = 3600
    /// How many attempts of a scripted failure (429, 500, 503, GOAWAY, stall) fail before one is
    /// accepted.
    package var failuresBeforeSuccess = 1
    /// Whether TLS offers HTTP/2 (ALPN); without it the fake stands in for a push service that
    /// speaks only HTTP/1.1.
    package var offersHTTP2 = true
    /// Where webhook endpoints and Web Push subscriptions whose id starts `307-` send the request
    /// on (`307 Temporary Redirect`): an SSRF probe, which a client must not follow.
    package var redirectLocation = "http://127.0.0.1:9/internal"

    package init(verificationKey: P256.Signing.PublicKey, keyID: String? = nil, teamID: String? = nil) {
        self.verificationKey = verificationKey
        self.keyID = keyID
        self.teamID = teamID
    }
}

/// What the fake answers to one request.
package enum FakeReply: Sendable, Equatable {
    case respond(status: Int, headers: [(String, String)], body: Data)
    /// Send GOAWAY on the connection (this stream not processed) and close it.
    case goAway
    /// Never answer.
    case stall

    package static func == (lhs: FakeReply, rhs: FakeReply) -> Bool {
        switch (lhs, rhs) {
        case (.goAway, .goAway), (.stall, .stall): true
        case (.respond(let a, let h1, let b1), .respond(let b, let h2, let b2)):
            a == b && b1 == b2 && h1.map { "\($0)=\($1)" } == h2.map { "\($0)=\($1)" }
        default: false
        }
    }

    static func json(_ status: Int, _ object: [String: Any], headers: [(String, String)] = []) -> FakeReply {
        let body = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        return .respond(status: status, headers: [("content-type", "application/json")] + headers, body: body)
    }

    static func apnsError(_ status: Int, _ reason: String, timestamp: Int? = nil) -> FakeReply {
        var object: [String: Any] = ["reason": reason]
        if let timestamp { object["timestamp"] = timestamp }
        return json(status, object)
    }
}

/// A request's header fields, looked up by lowercase name (the first of a repeated name wins);
/// pseudo-headers are left out.
package struct FakeRequestHeaders: Sendable {
    /// A dozen fields: a linear search beats hashing them into a dictionary.
    private var fields: [(name: String, value: String)] = []

    package init(_ pairs: some Sequence<(String, String)>) {
        fields.reserveCapacity(16)
        for (name, value) in pairs where !name.hasPrefix(":") {
            // HTTP/2 names are lowercase already; only HTTP/1.1 ones may need it.
            let name = name.utf8.contains(where: { (0x41...0x5A).contains($0) }) ? name.lowercased() : name
            fields.append((name, value))
        }
    }

    package subscript(_ name: String) -> String? { fields.first { $0.name == name }?.value }
}

/// The fake's memory: every APNs notification accepted (by `apns-id`, with how many times),
/// scripted failures, expired provider tokens, Web Push subscriptions and what they received.
/// Shared by all connections.
package final class FakeProviderState: Sendable {
    package struct AcceptedNotification: Sendable, Hashable {
        package var apnsID: String
        package var deviceToken: String
        package var topic: String
        package var pushType: String
        package var collapseID: String?
        package var payload: Data
    }

    package struct WebPushSubscription: Sendable {
        package var id: String
        package var key: P256.KeyAgreement.PrivateKey
        package var auth: Data
        package var messages: [Data] = []
    }

    /// What the fake knows about one `apns-id`: every attempt, every acceptance, the last one.
    private struct APNsRecord {
        var attempts = 0
        var accepted = 0
        var last: AcceptedNotification?
    }

    private struct Ledger {
        /// By `apns-id` (parsed: 16 bytes hash faster than 36 characters).
        var apns: [UUID: APNsRecord] = [:]
        /// `apns-id`s in order of first acceptance.
        var order: [UUID] = []
        /// Attempts of scripted Web Push and webhook failures and of `e0` tokens, by key.
        var attempts: [String: Int] = [:]
        var statuses: [Int: Int] = [:]
        var verifiedTokens: Set<String> = []
        /// The provider token verified last: a fan-out sends thousands of requests with it, and
        /// comparing it is cheaper than hashing it into `verifiedTokens`.
        var lastVerifiedToken = ""
        var validPayloads: Set<Data> = []
        /// The payload found valid last, for the same reason.
        var lastValidPayload = Data()
        var verifiedVAPID: [String: [String: any Sendable]] = [:]
        var expiredTokens: Set<String> = []
        var subscriptions: [String: WebPushSubscription] = [:]
        var webhooks: [String: (secret: String, received: [(id: String, body: Data)])] = [:]
        var requests = 0
    }

    package let configuration: FakeProviderConfiguration
    private let ledger = Mutex(Ledger())

    package init(configuration: FakeProviderConfiguration) {
        self.configuration = configuration
    }

    // MARK: APNs

    /// Answers `POST /3/device/<token>` as APNs would, or as the token's prefix scripts:
    /// `400` BadDeviceToken, `403` Forbidden, `410` Unregistered (timestamp now; `4100`: at the
    /// epoch, older than any registration), `413` PayloadTooLarge, `429` / `500` / `503` fail
    /// then succeed, `60a` GOAWAY then succeed, `57a11` stall then succeed, `e0` expire the
    /// provider token.
    package func apns(token: String, headers: FakeRequestHeaders, body: Data, now: Date) -> FakeReply {
        let reply = decideAPNs(token: token, header: { headers[$0] }, body: body, now: now)
        ledger.withLock { ledger in
            ledger.requests += 1
            if case .respond(let status, _, _) = reply { ledger.statuses[status, default: 0] += 1 }
        }
        return reply
    }

    private func decideAPNs(token: String, header: (String) -> String?, body: Data, now: Date) -> FakeReply {
        // Provider token.
        guard let authorization = header("authorization"), authorization.hasPrefix("bearer ") else {
            return .apnsError(403, "MissingProviderToken")
        }
        let jwt = String(authorization.dropFirst(7))
        let (known, expired) = ledger.withLock { ledger in
            (
                ledger.lastVerifiedToken == jwt || ledger.verifiedTokens.contains(jwt),
                !ledger.expiredTokens.isEmpty && ledger.expiredTokens.contains(jwt)
            )
        }
        if expired { return .apnsError(403, "ExpiredProviderToken") }
        if !known {
            guard let decoded = try? ES256JWT.verify(jwt, key: configuration.verificationKey) else {
                return .apnsError(403, "InvalidProviderToken")
            }
            if let keyID = configuration.keyID, decoded.header["kid"] as? String != keyID {
                return .apnsError(403, "InvalidProviderToken")
            }
            if let teamID = configuration.teamID, decoded.claims["iss"] as? String != teamID {
                return .apnsError(403, "InvalidProviderToken")
            }
            guard let issuedAt = decoded.claims["iat"] as? Int else { return .apnsError(403, "InvalidProviderToken") }
            if now.timeIntervalSince1970 - Double(issuedAt) > configuration.maximumTokenAge {
                return .apnsError(403, "ExpiredProviderToken")
            }
            ledger.withLock { ledger in
                ledger.verifiedTokens.insert(jwt)
                ledger.lastVerifiedToken = jwt
            }
        }
        // Request.
        let length = token.utf8.count
        guard length >= 8, length <= 200, length % 2 == 0, token.utf8.allSatisfy(Self.isHexDigit) else {
            return .apnsError(400, "BadDeviceToken")
        }
        guard let topic = header("apns-topic"), !topic.isEmpty else { return .apnsError(400, "MissingTopic") }
        let pushType = header("apns-push-type") ?? "alert"
        guard
            [
                "alert", "background", "liveactivity", "voip", "complication", "fileprovider", "mdm", "location",
                "pushtotalk", "widgets",
            ].contains(pushType)
        else { return .apnsError(400, "InvalidPushType") }
        if pushType == "liveactivity" && !topic.hasSuffix(".push-type.liveactivity") {
            return .apnsError(400, "TopicDisallowed")
        }
        let apnsID = header("apns-id") ?? UUID().text()
        guard let key = UUID(text: apnsID), !apnsID.utf8.contains(where: { (0x41...0x5A).contains($0) }) else {
            return .apnsError(400, "BadMessageId")
        }
        if let collapse = header("apns-collapse-id"), collapse.utf8.count > 64 {
            return .apnsError(400, "BadCollapseId")
        }
        if let priority = header("apns-priority"), !["1", "5", "10"].contains(priority) {
            return .apnsError(400, "BadPriority")
        }
        if let expiration = header("apns-expiration"), Int(expiration) == nil {
            return .apnsError(400, "BadExpirationDate")
        }
        guard !body.isEmpty else { return .apnsError(400, "PayloadEmpty") }
        guard body.count <= 4096 else { return .apnsError(413, "PayloadTooLarge") }
        // A fan-out sends one payload to many devices: a body already found valid is not parsed again.
        let validPayload = ledger.withLock { ledger in
            ledger.lastValidPayload == body || ledger.validPayloads.contains(body)
        }
        if !validPayload {
            guard let json = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any],
                json["aps"] is [String: Any]
            else { return .apnsError(400, "BadPayload") }
            ledger.withLock { ledger in
                if ledger.validPayloads.count >= 256 { ledger.validPayloads.removeAll() }
                ledger.validPayloads.insert(body)
                ledger.lastValidPayload = body
            }
        }

        // Scripted behaviour by token prefix (the token is hex, in either case).
        let attempt = ledger.withLock { ledger in Self.countAttempt(&ledger.apns[key, default: APNsRecord()]) }
        let failing = attempt <= configuration.failuresBeforeSuccess
        func scripts(_ prefix: String) -> Bool {
            length >= prefix.utf8.count && zip(token.utf8, prefix.utf8).allSatisfy { $0 | 0x20 == $1 }
        }
        if scripts("4100") { return .apnsError(410, "Unregistered", timestamp: 0) }
        if scripts("400") { return .apnsError(400, "BadDeviceToken") }
        if scripts("403") { return .apnsError(403, "Forbidden") }
        if scripts("410") {
            return .apnsError(410, "Unregistered", timestamp: Int(now.timeIntervalSince1970 * 1000))
        }
        if scripts("413") { return .apnsError(413, "PayloadTooLarge") }
        if scripts("429") && failing {
            return .json(429, ["reason": "TooManyRequests"], headers: [("retry-after", "1")])
        }
        if scripts("500") && failing { return .apnsError(500, "InternalServerError") }
        if scripts("503") && failing { return .apnsError(503, "ServiceUnavailable") }
        if scripts("60a") && failing { return .goAway }
        if scripts("57a11") && failing { return .stall }
        if scripts("e0") {
            let fresh = ledger.withLock { ledger -> Bool in
                guard !ledger.attempts.keys.contains("jwt:" + jwt) else { return false }
                ledger.attempts["jwt:" + jwt] = 1
                return true
            }
            if fresh && failing {
                ledger.withLock { _ = $0.expiredTokens.insert(jwt) }
                return .apnsError(403, "ExpiredProviderToken")
            }
        }

        let notification = AcceptedNotification(
            apnsID: apnsID, deviceToken: token, topic: topic, pushType: pushType,
            collapseID: header("apns-collapse-id"), payload: body)
        ledger.withLock { ledger in
            if Self.accept(notification, into: &ledger.apns[key, default: APNsRecord()]) {
                ledger.order.append(key)
            }
        }
        return .respond(status: 200, headers: [("apns-id", apnsID)], body: Data())
    }

    /// One more attempt with this `apns-id`; how many so far (one lookup, in place).
    private static func countAttempt(_ record: inout APNsRecord) -> Int {
        record.attempts += 1
        return record.attempts
    }

    /// Counts an acceptance; whether it is the first for this `apns-id`.
    private static func accept(_ notification: AcceptedNotification, into record: inout APNsRecord) -> Bool {
        record.accepted += 1
        record.last = notification
        return record.accepted == 1
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x46).contains(byte) || (0x61...0x66).contains(byte)
    }

    /// Every `apns-id` accepted, with how many times, in order of first acceptance.
    package var accepted: [(apnsID: String, count: Int)] {
        // Lowercase, as accepted: the fake refuses an uppercase `apns-id`.
        ledger.withLock { ledger in ledger.order.map { ($0.text(), ledger.apns[$0]!.accepted) } }
    }

    /// How many distinct `apns-id`s were accepted.
    package var uniqueAcceptedCount: Int { ledger.withLock { $0.order.count } }

    /// How many distinct `apns-id`s were accepted, and how many acceptances in all (without
    /// listing them).
    package var acceptedCounts: (unique: Int, total: Int) {
        ledger.withLock { ledger in
            (ledger.order.count, ledger.order.reduce(0) { $0 + ledger.apns[$1]!.accepted })
        }
    }

    package func notification(apnsID: String) -> AcceptedNotification? {
        guard let key = UUID(text: apnsID) else { return nil }
        return ledger.withLock { $0.apns[key]?.last }
    }

    package var statusCounts: [Int: Int] { ledger.withLock { $0.statuses } }

    /// Forgets everything (tests reuse one server).
    package func reset() {
        ledger.withLock { $0 = Ledger() }
    }

    // MARK: Web Push

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
    private func verifiedVAPID(_ authorization: String) -> [String: any Sendable]? {
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

    // MARK: Webhooks

    /// A new webhook endpoint with its signing secret (prefix `410-` answers 410, `503-` fails then
    /// succeeds, `307-` redirects to `redirectLocation`).
    package func webhookEndpoint(id: String = UUID().uuidString.lowercased(), baseURL: String) -> (
        url: String, secret: String
    ) {
        let secret = StandardWebhooks.newSecret()
        ledger.withLock { $0.webhooks[id] = (secret, []) }
        return ("\(baseURL)/webhooks/\(id)", secret)
    }

    /// Answers `POST /webhooks/<id>`: verifies the Standard Webhooks signature and a timestamp
    /// within five minutes, and records the message.
    package func webhook(id: String, headers: FakeRequestHeaders, body: Data, now: Date) -> FakeReply {
        func header(_ name: String) -> String? { headers[name] }
        ledger.withLock { $0.requests += 1 }
        guard let endpoint = ledger.withLock({ $0.webhooks[id] }) else {
            return .json(404, ["reason": "no such endpoint"])
        }
        guard let messageID = header("webhook-id"), let stamp = header("webhook-timestamp").flatMap(Int.init),
            let signature = header("webhook-signature"),
            let key = try? StandardWebhooks.key(fromSecret: endpoint.secret),
            StandardWebhooks.verify(header: signature, id: messageID, timestamp: stamp, body: body, key: key)
        else { return .json(401, ["reason": "bad signature"]) }
        guard abs(Double(stamp) - now.timeIntervalSince1970) < 300 else {
            return .json(400, ["reason": "stale timestamp"])
        }
        if id.hasPrefix("410-") { return .json(410, ["reason": "gone"]) }
        if id.hasPrefix("307-") {
            return .json(307, ["reason": "moved"], headers: [("location", configuration.redirectLocation)])
        }
        let attempt = ledger.withLock { ledger -> Int in
            ledger.attempts["webhook:" + messageID, default: 0] += 1
            return ledger.attempts["webhook:" + messageID]!
        }
        if id.hasPrefix("503-") && attempt <= configuration.failuresBeforeSuccess {
            return .json(503, ["reason": "unavailable"])
        }
        ledger.withLock { $0.webhooks[id]?.received.append((messageID, body)) }
        return .respond(status: 204, headers: [], body: Data())
    }

    /// Messages a webhook endpoint received: id and body.
    package func webhookMessages(id: String) -> [(id: String, body: Data)]? {
        ledger.withLock { $0.webhooks[id]?.received }
    }
}
