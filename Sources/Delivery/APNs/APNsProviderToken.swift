import Clocks
import Crypto
import Foundation
import Synchronization

/// The APNs provider authentication token (ES256 JWT) for one signing key, shared by every
/// connection that uses the key. It is regenerated when it is 50 minutes old (Apple: at most every
/// 20 minutes, at least every 60), and once more when APNs says it expired.
///
/// Every push asks for the token, so reading it is a lock, not a hop to another executor; the
/// rare signing happens under the lock, so concurrent callers never make two tokens.
package final class APNsProviderToken: Sendable {
    package let keyID: String
    package let teamID: String
    private let key: P256.Signing.PrivateKey
    private let clock: any WallClock
    /// Age at which a token is replaced.
    package static let lifetime: TimeInterval = 50 * 60

    private struct State {
        var token: String?
        var issuedAt = Date.distantPast
        var generated = 0
        /// The last token APNs answered ExpiredProviderToken to.
        var rejected: String?
    }
    private let state = Mutex(State())

    package init(key: P256.Signing.PrivateKey, keyID: String, teamID: String, clock: any WallClock) {
        self.key = key
        self.keyID = keyID
        self.teamID = teamID
        self.clock = clock
    }

    /// How many tokens have been made.
    package var generated: Int { state.withLock { $0.generated } }

    /// The token to send now.
    package func current() throws -> String {
        let now = clock.now()
        return try state.withLock { state in
            if let token = state.token, now.timeIntervalSince(state.issuedAt) < Self.lifetime { return token }
            return try generate(at: now, into: &state)
        }
    }

    /// APNs answered ExpiredProviderToken to a request that carried `token`.
    package func reject(_ token: String) {
        state.withLock { $0.rejected = token }
    }

    /// Replaces the token if it is the one APNs last rejected, and says whether it did: however
    /// many requests were refused with one token, and however many callers ask, that token is
    /// replaced once.
    package func refreshRejected() throws -> Bool {
        try state.withLock { state in
            guard let rejected = state.rejected, state.token == rejected else { return false }
            _ = try generate(at: clock.now(), into: &state)
            return true
        }
    }

    private func generate(at now: Date, into state: inout State) throws -> String {
        let header = "{\"alg\":\"ES256\",\"kid\":\(ES256JWT.quote(keyID))}"
        let claims = "{\"iss\":\(ES256JWT.quote(teamID)),\"iat\":\(Int(now.timeIntervalSince1970))}"
        let new = try ES256JWT.sign(header: header, claims: claims, key: key)
        state.token = new
        state.issuedAt = now
        state.generated += 1
        return new
    }
}
