import Alerts
import Crypto
import Foundation

/// The APNs provider authentication token (ES256 JWT) for one signing key, shared by every
/// connection that uses the key. It is regenerated when it is 50 minutes old (Apple: at most every
/// 20 minutes, at least every 60), and once more when APNs says it expired.
package actor APNsProviderToken {
    package let keyID: String
    package let teamID: String
    private let key: P256.Signing.PrivateKey
    private let clock: any WallClock
    /// Age at which a token is replaced.
    package static let lifetime: TimeInterval = 50 * 60

    private var token: String?
    private var issuedAt = Date.distantPast
    package private(set) var generated = 0

    package init(key: P256.Signing.PrivateKey, keyID: String, teamID: String, clock: any WallClock) {
        self.key = key
        self.keyID = keyID
        self.teamID = teamID
        self.clock = clock
    }

    /// The token to send now.
    package func current() throws -> String {
        let now = clock.now()
        if let token, now.timeIntervalSince(issuedAt) < Self.lifetime { return token }
        return try generate(at: now)
    }

    /// APNs rejected `rejected` as expired. Makes a new token unless another caller already did
    /// (so a burst of rejections makes one new token, not many).
    package func refresh(after rejected: String) throws -> String {
        if let token, token != rejected { return token }
        return try generate(at: clock.now())
    }

    private func generate(at now: Date) throws -> String {
        let header = "{\"alg\":\"ES256\",\"kid\":\(ES256JWT.quote(keyID))}"
        let claims = "{\"iss\":\(ES256JWT.quote(teamID)),\"iat\":\(Int(now.timeIntervalSince1970))}"
        let new = try ES256JWT.sign(header: header, claims: claims, key: key)
        token = new
        issuedAt = now
        generated += 1
        return new
    }
}
