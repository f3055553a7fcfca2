import Delivery
import Foundation
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
