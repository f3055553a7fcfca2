import Alerts
import Clocks
import Crypto
import Delivery
import Foundation
import Synchronization

/// The fake APNs: provider tokens checked, answers scripted by device-token prefix.
extension FakeProviderState {
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

    func decideAPNs(token: String, header: (String) -> String?, body: Data, now: Date) -> FakeReply {
        if let refusal = checkProviderToken(header: header, now: now) { return refusal }
        return decideDevicePush(token: token, header: header, body: body, now: now)
    }

    /// The provider token's check, as APNs makes it first on every request (device pushes,
    /// channel management, broadcasts): nil when it is valid.
    func checkProviderToken(header: (String) -> String?, now: Date) -> FakeReply? {
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
        return nil
    }

    func decideDevicePush(token: String, header: (String) -> String?, body: Data, now: Date) -> FakeReply {
        let jwt = String((header("authorization") ?? "").dropFirst(7))
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

        // Push-to-start past the device's budget: refused as Apple refuses too many pushes to one token.
        let start = pushType == "liveactivity" ? Self.start(body) : nil
        if start != nil, startBudgetSpent(device: token) {
            return .json(429, ["reason": "TooManyRequests"])
        }
        let notification = AcceptedNotification(
            apnsID: apnsID, deviceToken: token, topic: topic, pushType: pushType,
            collapseID: header("apns-collapse-id"), payload: body)
        if let start { startedActivity(device: token, aps: start, apnsID: apnsID, payload: body) }
        let at = configuration.clock()
        ledger.withLock { ledger in
            if Self.accept(notification, into: &ledger.apns[key, default: APNsRecord()]) {
                ledger.apns[key]!.firstAt = at
                ledger.order.append(key)
                ledger.timeline.accepted(body, at: MonotonicClock.nanoseconds())
            }
        }
        return .respond(status: 200, headers: [("apns-id", apnsID)], body: Data())
    }

    /// One more attempt with this `apns-id`; how many so far (one lookup, in place).
    static func countAttempt(_ record: inout APNsRecord) -> Int {
        record.attempts += 1
        return record.attempts
    }

    /// Counts an acceptance; whether it is the first for this `apns-id`.
    static func accept(_ notification: AcceptedNotification, into record: inout APNsRecord) -> Bool {
        record.accepted += 1
        if let last = record.last,
            last.collapseID != notification.collapseID || last.deviceToken != notification.deviceToken
        {
            record.differed = true
        }
        record.last = notification
        return record.accepted == 1
    }

    /// When the notifications of each moment were first and last accepted (an `apns-id`'s first
    /// acceptance only), by the payload's `moment.id`: what a latency benchmark reads.
    package var timeline: [(momentID: String?, first: Int64, last: Int64, count: Int)] {
        let entries = ledger.withLock { $0.timeline.entries }
        // By moment: one moment's payloads differ by wording (jinx-safe, a device's team names).
        var byMoment: [String: (first: Int64, last: Int64, count: Int)] = [:]
        var unnamed: [(momentID: String?, first: Int64, last: Int64, count: Int)] = []
        for entry in entries {
            let object = (try? JSONSerialization.jsonObject(with: entry.payload)) as? [String: Any]
            guard let id = (object?["moment"] as? [String: Any])?["id"] as? String else {
                unnamed.append((nil, entry.first, entry.last, entry.count))
                continue
            }
            if let known = byMoment[id] {
                byMoment[id] = (min(known.first, entry.first), max(known.last, entry.last), known.count + entry.count)
            } else {
                byMoment[id] = (entry.first, entry.last, entry.count)
            }
        }
        return byMoment.map { ($0.key, $0.value.first, $0.value.last, $0.value.count) }.sorted { $0.first < $1.first }
            + unnamed
    }

    static func isHexDigit(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x46).contains(byte) || (0x61...0x66).contains(byte)
    }

    /// Every `apns-id` accepted, with how many times, in order of first acceptance.
    package var accepted: [(apnsID: String, count: Int)] {
        // Lowercase, as accepted: the fake refuses an uppercase `apns-id`.
        ledger.withLock { ledger in ledger.order.map { ($0.text(), ledger.apns[$0]!.accepted) } }
    }

    /// Whether an acceptance of `apnsID` after its first came for another device or with another
    /// collapse id.
    package func acceptedDifferently(apnsID: String) -> Bool {
        guard let key = UUID(text: apnsID) else { return false }
        return ledger.withLock { $0.apns[key]?.differed ?? false }
    }

    /// When each `apns-id` (lowercase) was first accepted, notifications and broadcasts alike, on the
    /// configuration's clock.
    package var acceptedAt: [String: Date] {
        var times: [String: Date] = ledger.withLock { ledger in
            Dictionary(
                uniqueKeysWithValues: ledger.order.compactMap { id in ledger.apns[id]!.firstAt.map { (id.text(), $0) } }
            )
        }
        for broadcast in acceptedBroadcasts { times[broadcast.apnsID] = broadcast.at }
        return times
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
        broadcast.withLock { $0 = BroadcastLedger() }
    }
}
