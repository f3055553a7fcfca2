import Crypto
import Foundation
import Synchronization

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
    struct APNsRecord {
        var attempts = 0
        var accepted = 0
        var last: AcceptedNotification?
        /// Whether an acceptance after the first came for another device or with another collapse
        /// id (a resend must carry the first's).
        var differed = false
        /// When it was first accepted, on the configuration's clock.
        var firstAt: Date?
    }

    struct Ledger {
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
        var timeline = AcceptedTimeline()
    }

    /// First and last acceptance of each distinct APNs payload (a fan-out sends one payload to
    /// many devices), on CLOCK_MONOTONIC.
    struct AcceptedTimeline {
        struct Entry {
            var payload: Data
            var first: Int64
            var last: Int64
            var count: Int
        }

        var entries: [Entry] = []
        private var index: [Data: Int] = [:]
        /// The entry of the payload accepted last: a fan-out's requests carry the same one.
        private var lastIndex: Int?

        mutating func accepted(_ payload: Data, at nanoseconds: Int64) {
            let position: Int
            if let lastIndex, entries[lastIndex].payload == payload {
                position = lastIndex
            } else if let known = index[payload] {
                position = known
            } else {
                position = entries.count
                entries.append(Entry(payload: payload, first: nanoseconds, last: nanoseconds, count: 0))
                index[payload] = position
            }
            entries[position].last = nanoseconds
            entries[position].count += 1
            lastIndex = position
        }
    }

    package let configuration: FakeProviderConfiguration
    let ledger = Mutex(Ledger())
    /// Broadcast channels and what was broadcast on them.
    let broadcast = Mutex(BroadcastLedger())
    /// Requests held by `hold()`: each one's answer, run on its connection's event loop, and the
    /// `apns-id` each carried (if any).
    let gate = Mutex(
        (holding: false, waiting: [@Sendable () -> Void](), ids: [String](), gaveUp: Set<String>()))

    package init(configuration: FakeProviderConfiguration) {
        self.configuration = configuration
    }
}

/// A gate for tests that must catch a sender with requests truly unanswered: while held, requests
/// that arrive over HTTP/2 are neither routed (the ledger does not see them) nor answered; on
/// release each is routed and answered in turn, unless its connection closed meanwhile, as a
/// request lost with a dying client never reaches the provider.
extension FakeProviderState {
    /// Holds requests from now until `release()`.
    package func hold() {
        gate.withLock { $0.holding = true }
    }

    /// Routes and answers every held request, and stops holding.
    package func release() {
        let waiting = gate.withLock { gate in
            gate.holding = false
            defer { (gate.waiting, gate.ids) = ([], []) }
            return gate.waiting
        }
        for answer in waiting { answer() }
    }

    /// The `apns-id` of every request held now, in arrival order (lowercased as sent).
    package var heldAPNsIDs: [String] {
        gate.withLock { $0.ids }
    }

    /// The `apns-id` of every held request whose sender reset its stream before the release (it
    /// gave up waiting, as on its timeout) and which was delivered all the same: in doubt for the
    /// sender, which sends it again.
    package var gaveUpAPNsIDs: Set<String> {
        gate.withLock { $0.gaveUp }
    }

    func gaveUpOn(apnsID: String) {
        _ = gate.withLock { $0.gaveUp.insert(apnsID.lowercased()) }
    }

    /// Keeps `answer` for the release if requests are held now; false when they are not.
    /// `apnsID` is read only then.
    func holdIfHeld(apnsID: @autoclosure () -> String?, _ answer: @escaping @Sendable () -> Void) -> Bool {
        gate.withLock { gate in
            guard gate.holding else { return false }
            gate.waiting.append(answer)
            if let apnsID = apnsID() { gate.ids.append(apnsID) }
            return true
        }
    }
}
