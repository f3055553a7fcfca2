import Crypto
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
    /// Broadcast channels an app may hold at once (Apple: 10,000 per app per environment).
    package var channelLimit = 10_000
    /// Push-to-start: starts one device accepts in any `startWindow` (Apple documents a small budget,
    /// not its size); past it a start is refused with 429 `TooManyRequests`. Nil: no budget.
    package var startBudget: Int? = 10
    package var startWindow: TimeInterval = 3600
    /// The clock of the push-to-start budget and of each notification's and broadcast's first
    /// acceptance (``FakeProviderState/acceptedAt``): the real one, or a test's (the pipeline's own).
    /// Provider tokens are checked on the real clock.
    package var clock: @Sendable () -> Date = { Date() }

    package init(verificationKey: P256.Signing.PublicKey, keyID: String? = nil, teamID: String? = nil) {
        self.verificationKey = verificationKey
        self.keyID = keyID
        self.teamID = teamID
    }
}
