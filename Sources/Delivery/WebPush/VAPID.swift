import Crypto
import Foundation
import Synchronization

/// Voluntary Application Server Identification for Web Push (RFC 8292).
package struct VAPID: Sendable {
    package let key: P256.Signing.PrivateKey
    /// `mailto:` or `https:` contact (Apple's push service requires one).
    package let subject: String

    package init(key: P256.Signing.PrivateKey, subject: String) {
        self.key = key
        self.subject = subject
    }

    /// The public key as the browser's `applicationServerKey` and the `k` parameter: base64url of
    /// the uncompressed point.
    package var publicKeyBase64URL: String { Base64URL.encode(key.publicKey.x963Representation) }

    /// `Authorization: vapid t=<JWT>, k=<key>` for `endpoint`, expiring `lifetime` after `now` (at
    /// most 24 hours).
    package func authorization(endpoint: URL, now: Date, lifetime: TimeInterval = 12 * 3600) throws -> String {
        guard let origin = WebPushChannel.originAndPath(of: endpoint.absoluteString)?.origin else {
            throw URLError(.badURL)
        }
        return try authorization(audience: origin, now: now, lifetime: lifetime)
    }

    /// The same for the push service at `audience`: its origin, `https://host[:port]`.
    package func authorization(audience: String, now: Date, lifetime: TimeInterval = 12 * 3600) throws -> String {
        let expiry = Int(now.timeIntervalSince1970 + min(lifetime, 24 * 3600))
        let claims = "{\"aud\":\(ES256JWT.quote(audience)),\"exp\":\(expiry),\"sub\":\(ES256JWT.quote(subject))}"
        let token = try ES256JWT.sign(header: "{\"typ\":\"JWT\",\"alg\":\"ES256\"}", claims: claims, key: key)
        return "vapid t=\(token), k=\(publicKeyBase64URL)"
    }

    package struct ParsedAuthorization: Sendable {
        package var token: String
        package var key: String
    }

    /// Splits a `vapid t=..., k=...` header.
    package static func parse(authorization: String) -> ParsedAuthorization? {
        guard authorization.hasPrefix("vapid ") else { return nil }
        var token: String?
        var key: String?
        for part in authorization.dropFirst(6).split(separator: ",") {
            let trimmed = part.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("t=") { token = String(trimmed.dropFirst(2)) }
            if trimmed.hasPrefix("k=") { key = String(trimmed.dropFirst(2)) }
        }
        guard let token, let key else { return nil }
        return ParsedAuthorization(token: token, key: key)
    }

    /// Verifies a VAPID token against its `k` and returns the claims: the check a push service
    /// makes (and `nohit fake-apns`'s Web Push endpoint).
    package static func verify(token: String, key: String) throws -> [String: any Sendable] {
        guard let raw = Base64URL.decode(key) else { throw ES256JWT.VerificationError.malformed }
        let publicKey = try P256.Signing.PublicKey(x963Representation: raw)
        return try ES256JWT.verify(token, key: publicKey).claims
    }
}

/// Signed VAPID headers reused per push service: one ES256 signature per audience an hour, not
/// one per push. Each header is issued for 12 hours and used for at most the first.
package final class VAPIDAuthorizations: Sendable {
    package let vapid: VAPID
    let reuse: TimeInterval
    private let issued = Mutex<[String: (at: Date, header: String)]>([:])

    package init(vapid: VAPID, reuse: TimeInterval = 3600) {
        self.vapid = vapid
        self.reuse = reuse
    }

    /// The header for the push service at `audience` (its origin, as `WebPushChannel` derives it).
    package func authorization(audience: String, now: Date) throws -> String {
        if let known = issued.withLock({ $0[audience] }), now >= known.at, now.timeIntervalSince(known.at) < reuse {
            return known.header
        }
        let header = try vapid.authorization(audience: audience, now: now)
        issued.withLock { $0[audience] = (now, header) }
        return header
    }
}
