import Delivery
import Foundation
import NIOCore
import Testing

/// The retry state machine, outcome by outcome.
@Suite struct RetryPolicyTests {
    static let now = Date(timeIntervalSince1970: 1_600_000_000)
    static let policy = RetryPolicy()

    static func state(attempts: Int = 1, refreshed: Bool = false, age: TimeInterval = 10) -> DeliveryRetryState {
        DeliveryRetryState(
            attempts: attempts, tokenRefreshed: refreshed, createdAt: now.addingTimeInterval(-age),
            registeredAt: now.addingTimeInterval(-86_400))
    }

    @Test func acceptedIsDelivered() {
        var state = Self.state()
        #expect(state.next(after: .accepted, policy: Self.policy, now: Self.now, random: 0.5) == .markDelivered)
    }

    @Test func goneIsPrunedUnlessTheDeviceRegisteredAfterwards() {
        var state = Self.state()
        #expect(
            state.next(
                after: .gone(reason: "Unregistered", since: Self.now.addingTimeInterval(-3600)), policy: Self.policy,
                now: Self.now, random: 0)
                == .pruneDevice(reason: "Unregistered"))
        var reRegistered = Self.state()
        let action = reRegistered.next(
            after: .gone(reason: "Unregistered", since: Self.now.addingTimeInterval(-90_000)), policy: Self.policy,
            now: Self.now, random: 0)
        guard case .fail(let reason) = action else {
            Issue.record("expected fail, got \(action)")
            return
        }
        #expect(reason.contains("device kept"))
    }

    @Test func rejectedIsNeverRetried() {
        var state = Self.state()
        #expect(
            state.next(
                after: .rejected(status: 413, reason: "PayloadTooLarge"), policy: Self.policy, now: Self.now, random: 0)
                == .fail(reason: "413 PayloadTooLarge"))
    }

    /// A refusal for the server's configuration holds the delivery, however many attempts and
    /// however old: it is neither failed nor retried until the configuration is mended.
    @Test func aConfigurationRefusalHolds() {
        for attempts in [1, 10, 50] {
            var state = Self.state(attempts: attempts)
            #expect(
                state.next(
                    after: .misconfigured(reason: "InvalidProviderToken"), policy: Self.policy,
                    now: Self.now.addingTimeInterval(86_400), random: 0) == .hold(reason: "InvalidProviderToken"))
        }
    }

    /// Apple's reasons that are the server's configuration, and those that are not.
    @Test func apnsReasonsAboutTheConfigurationAreHeldTheRestAsBefore() {
        func outcome(_ status: Int, _ reason: String) -> ProviderOutcome {
            OutcomeClassifier.apns(
                status: status, body: ByteBuffer(string: #"{"reason":"\#(reason)"}"#), retryAfter: nil)
        }
        for (status, reason) in [
            (403, "InvalidProviderToken"), (403, "MissingProviderToken"), (403, "BadCertificate"),
            (403, "BadCertificateEnvironment"), (403, "UnrelatedKeyIdInToken"), (400, "BadTopic"),
            (400, "TopicDisallowed"),
        ] {
            #expect(outcome(status, reason) == .misconfigured(reason: reason), "\(status) \(reason)")
            #expect(!ProviderOutcome.configurationFix(for: reason).isEmpty)
        }
        #expect(outcome(403, "ExpiredProviderToken") == .expiredProviderToken)
        #expect(outcome(400, "BadDeviceToken") == .gone(reason: "BadDeviceToken", since: nil))
        #expect(outcome(400, "BadPriority") == .rejected(status: 400, reason: "BadPriority"))
        // A device's environment is its own choice: not said to be the configuration's.
        #expect(
            outcome(403, "BadEnvironmentKeyInToken") == .rejected(status: 403, reason: "BadEnvironmentKeyInToken"))
        // "The specified action is not allowed": not said to be the configuration's.
        #expect(outcome(403, "Forbidden") == .rejected(status: 403, reason: "Forbidden"))
        #expect(outcome(413, "PayloadTooLarge") == .rejected(status: 413, reason: "PayloadTooLarge"))
        // A configuration reason with another status is not taken for one.
        #expect(outcome(500, "InvalidProviderToken") == .transient(reason: "500 InvalidProviderToken", retryAfter: nil))
    }

    /// A topic refused is the configuration's only for an app the operator declared: on a server
    /// without declared apps a device chooses its topic, and one registration must not hold
    /// deliveries and degrade the service.
    @Test func aTopicRefusalIsTheConfigurationsOnlyForADeclaredApp() {
        let declared: Set<String> = ["com.example.nohit"]
        for reason in ["TopicDisallowed", "BadTopic"] {
            let refused = ProviderOutcome.misconfigured(reason: reason)
            #expect(APNsChannel.screened(refused, topic: "com.example.nohit", declared: declared) == refused)
            #expect(
                APNsChannel.screened(refused, topic: "com.someone.else", declared: declared)
                    == .rejected(status: 400, reason: reason))
            #expect(
                APNsChannel.screened(refused, topic: "com.example.nohit", declared: [])
                    == .rejected(status: 400, reason: reason))
        }
        // A key refused is the configuration's whatever the topic.
        let key = ProviderOutcome.misconfigured(reason: "InvalidProviderToken")
        #expect(APNsChannel.screened(key, topic: "com.someone.else", declared: []) == key)
    }

    @Test func expiredProviderTokenRefreshesOnceThenBacksOff() {
        var state = Self.state()
        #expect(
            state.next(after: .expiredProviderToken, policy: Self.policy, now: Self.now, random: 0)
                == .refreshTokenAndRetry)
        #expect(state.tokenRefreshed)
        guard case .retry = state.next(after: .expiredProviderToken, policy: Self.policy, now: Self.now, random: 0)
        else {
            Issue.record("a second ExpiredProviderToken must not refresh again")
            return
        }
    }

    @Test func backoffIsExponentialWithFullJitterAndHonoursRetryAfter() {
        for attempts in 1...8 {
            let ceiling = min(Self.policy.maximumDelay, Self.policy.baseDelay * pow(2, Double(attempts - 1)))
            var low = Self.state(attempts: attempts)
            var high = Self.state(attempts: attempts)
            #expect(
                low.next(
                    after: .transient(reason: "503", retryAfter: nil), policy: Self.policy, now: Self.now, random: 0)
                    == .retry(at: Self.now, reason: "503"))
            #expect(
                high.next(
                    after: .transient(reason: "503", retryAfter: nil), policy: Self.policy, now: Self.now,
                    random: 0.999_999)
                    == .retry(at: Self.now.addingTimeInterval(ceiling * 0.999_999), reason: "503"))
        }
        var state = Self.state()
        #expect(
            state.next(
                after: .transient(reason: "429", retryAfter: 30), policy: Self.policy, now: Self.now, random: 0.5)
                == .retry(at: Self.now.addingTimeInterval(30), reason: "429"))
    }

    @Test func lostConnectionIsResentAtOnce() {
        var state = Self.state()
        #expect(
            state.next(after: .connectionLost(reason: "GOAWAY"), policy: Self.policy, now: Self.now, random: 0.9)
                == .retry(at: Self.now, reason: "GOAWAY"))
    }

    @Test func givesUpWhenTooManyOrTooLate() {
        var many = Self.state(attempts: Self.policy.maximumAttempts)
        guard
            case .fail = many.next(
                after: .transient(reason: "500", retryAfter: nil), policy: Self.policy, now: Self.now, random: 0)
        else {
            Issue.record("expected to give up after the last attempt")
            return
        }
        var stale = Self.state(age: Self.policy.staleAfter + 1)
        guard
            case .fail = stale.next(
                after: .connectionLost(reason: "reset"), policy: Self.policy, now: Self.now, random: 0)
        else {
            Issue.record("expected to give up on a stale alert")
            return
        }
    }
}
