import Foundation

/// What a provider said about one delivery attempt, already classified.
package enum ProviderOutcome: Sendable, Hashable {
    /// Accepted (APNs 200, Web Push 201, webhook 2xx).
    case accepted
    /// The token, subscription or endpoint is gone: stop sending to it. `since` is when the
    /// provider learned it (APNs 410 `timestamp`); a device registered after that is not pruned.
    case gone(reason: String, since: Date?)
    /// Will never succeed as sent (bad request, forbidden, too large): record and stop.
    case rejected(status: Int, reason: String)
    /// Try again later (429, 5xx, timeout), after `retryAfter` when the provider said.
    case transient(reason: String, retryAfter: TimeInterval?)
    /// APNs 403 ExpiredProviderToken: the JWT must be refreshed.
    case expiredProviderToken
    /// The connection went away under the request (GOAWAY, reset): send again on a new one.
    case connectionLost(reason: String)
    /// Never put on the wire: its time to be sent (``OutboundDelivery/sendBy``, its claim's half
    /// lease) had passed when it came to be written. The dispatcher sends it again if its lease
    /// still holds, or gives it back; it counts as no attempt.
    case notSent(reason: String)
    /// Refused for the server's configuration, not the device: a key, key id, team, topic or
    /// environment that does not fit (APNs `InvalidProviderToken`, `BadTopic`, …). Every delivery
    /// through that configuration would be refused alike: they are held, not failed, until the
    /// operator mends it (``ProviderOutcome/configurationFix(for:)`` says how).
    case misconfigured(reason: String)

    /// APNs' reasons that are about the server's configuration (Apple's "Handling notification
    /// responses from APNs"), each with what the operator is to do.
    package static let configurationReasons: [String: String] = [
        "InvalidProviderToken":
            "the key (apns.key), its key id (apns.key-id) and team id (apns.team-id), or an app's own in the apps "
            + "file, do not belong together, or the key was revoked: check them under Keys in Apple's developer "
            + "portal, then restart",
        "MissingProviderToken": "no provider token was sent: give the app a key (apns.key, apns.key-id, apns.team-id)",
        "BadCertificate": "the certificate was refused: use a token key (apns.key) from Apple's developer portal",
        "BadCertificateEnvironment":
            "the certificate is for the other environment: use a token key (apns.key), which serves both",
        "UnrelatedKeyIdInToken": "the key id (apns.key-id) is not the key's: give the id Apple shows beside the key",
        "BadTopic": "the app's topic (its bundle id) is not valid: check the topic in the apps file or the devices",
        "TopicDisallowed":
            "the key's team may not push to this topic: the app's bundle id must belong to the key's team, with "
            + "push notifications enabled for it",
    ]

    /// The configuration reasons about a topic, with their status: the operator's only for an app
    /// the operator declared (a device registering on a server without declared apps chooses its
    /// topic, and a topic the key may not push to is then that device's own refusal).
    package static let topicReasons: [String: Int] = ["BadTopic": 400, "TopicDisallowed": 400]

    /// What the operator is to do about a configuration refusal.
    package static func configurationFix(for reason: String) -> String {
        configurationReasons[reason] ?? "check the provider's settings for this app"
    }
}

/// The delivery's next step.
package enum DeliveryAction: Sendable, Hashable {
    case markDelivered
    /// Put back in the queue for `at`.
    case retry(at: Date, reason: String)
    /// Refresh the provider token, then send again at once.
    case refreshTokenAndRetry
    /// Disable the device and stop.
    case pruneDevice(reason: String)
    /// Keep it, unsent and not failed, until the server's configuration is mended and the
    /// service restarted (``ProviderOutcome/misconfigured(reason:)``).
    case hold(reason: String)
    /// Stop with this reason.
    case fail(reason: String)
}

/// The retry policy of one delivery: exponential backoff with full jitter, Retry-After honoured,
/// one token refresh, immediate resend after a lost connection, and a deadline after which an
/// alert is stale. A value: the dispatcher feeds it outcomes and performs the actions.
package struct RetryPolicy: Sendable, Hashable {
    package var baseDelay: TimeInterval = 1
    package var maximumDelay: TimeInterval = 60
    package var maximumAttempts = 10
    /// After this long since the moment an alert is no longer worth sending.
    package var staleAfter: TimeInterval = 30 * 60

    package init() {}
}

/// Where one delivery stands in its retries.
package struct DeliveryRetryState: Sendable, Hashable {
    package var attempts: Int
    package var tokenRefreshed: Bool
    package var createdAt: Date
    package var registeredAt: Date

    package init(attempts: Int, tokenRefreshed: Bool = false, createdAt: Date, registeredAt: Date) {
        self.attempts = attempts
        self.tokenRefreshed = tokenRefreshed
        self.createdAt = createdAt
        self.registeredAt = registeredAt
    }

    /// The next step after `outcome`, at `now`; `random` in [0, 1) picks the jitter, and is only
    /// evaluated for a backoff (a draw from the system generator is a syscall, and most answers
    /// need none).
    package mutating func next(
        after outcome: ProviderOutcome, policy: RetryPolicy, now: Date, random: @autoclosure () -> Double
    ) -> DeliveryAction {
        let stale = now.timeIntervalSince(createdAt) > policy.staleAfter
        switch outcome {
        case .accepted:
            return .markDelivered
        case .gone(let reason, let since):
            if let since, registeredAt > since {
                // Re-registered after the provider noticed: the device is fine, this send is not.
                return .fail(reason: "\(reason) (older than the device's registration; device kept)")
            }
            return .pruneDevice(reason: reason)
        case .rejected(let status, let reason):
            return .fail(reason: "\(status) \(reason)")
        case .expiredProviderToken:
            if tokenRefreshed {
                return backoff(
                    reason: "ExpiredProviderToken after a refresh", retryAfter: nil, policy: policy, now: now,
                    random: random, stale: stale)
            }
            tokenRefreshed = true
            return .refreshTokenAndRetry
        case .connectionLost(let reason):
            guard attempts < policy.maximumAttempts, !stale else { return .fail(reason: "gave up: \(reason)") }
            return .retry(at: now, reason: reason)
        case .notSent(let reason):
            // Nothing reached the provider. (The dispatcher does not ask: it sends it again.)
            return .retry(at: now, reason: reason)
        case .transient(let reason, let retryAfter):
            return backoff(
                reason: reason, retryAfter: retryAfter, policy: policy, now: now, random: random, stale: stale)
        case .misconfigured(let reason):
            return .hold(reason: reason)
        }
    }

    private func backoff(
        reason: String, retryAfter: TimeInterval?, policy: RetryPolicy, now: Date, random: () -> Double,
        stale: Bool
    ) -> DeliveryAction {
        guard attempts < policy.maximumAttempts, !stale else {
            return .fail(reason: "gave up after \(attempts) attempts: \(reason)")
        }
        let ceiling = min(policy.maximumDelay, policy.baseDelay * pow(2, Double(max(attempts - 1, 0))))
        let delay = max(retryAfter ?? 0, ceiling * min(max(random(), 0), 1))
        return .retry(at: now.addingTimeInterval(delay), reason: reason)
    }
}
