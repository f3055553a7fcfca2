import Foundation
import Synchronization

/// The fake APNs's broadcast push (iOS 18): channel management as Apple documents it ("Sending
/// channel management requests to APNs") and broadcasts on a channel ("Sending broadcast push
/// notification requests to APNs"), with what no real service shows: each channel's subscribers
/// (the devices whose Live Activity was started with it), so a test or a benchmark can say how
/// many activities one broadcast updated.
///
/// One host serves both of Apple's (management on `api-manage-broadcast…:2195/2196`, broadcasts on
/// the push host) and both environments. Reasons Apple names are Apple's; the fake's own where its
/// documents name none: `BadMessageStoragePolicy`, `TooManyChannels`.
extension FakeProviderState {
    /// One channel.
    struct FakeChannel {
        var id: String
        var bundleID: String
        /// 0: no storage (the higher budget; broadcasts must expire at once); 1: the latest kept.
        var policy: Int
        var subscribers: Set<String> = []
        var broadcasts = 0
    }

    /// One broadcast accepted: its channel, how many activities it reached, how many times it
    /// was accepted (a resend after a crash carries the same `apns-id`).
    package struct AcceptedBroadcast: Sendable, Hashable {
        package var apnsID: String
        package var channelID: String
        package var priority: Int
        package var reached: Int
        package var count: Int
        package var payload: Data
        /// When it was first accepted, on the configuration's clock.
        package var at: Date
    }

    struct BroadcastLedger {
        var channels: [String: FakeChannel] = [:]
        /// Channel ids by bundle, in order of creation.
        var byBundle: [String: [String]] = [:]
        var broadcasts: [String: AcceptedBroadcast] = [:]
        var order: [String] = []
        var created = 0
        var deleted = 0
        /// Push-to-start: each device's accepted starts (for its budget), and every start accepted.
        var startTimes: [String: [Date]] = [:]
        var starts: [StartedActivity] = []
        /// Starts refused for the budget.
        var refusedStarts = 0
        /// Channels are made but the answer never sent: a sender that dies now leaves a channel it
        /// never learned of (tests of the sweep).
        var stallCreates = false
    }

    /// From now on (`true`) each channel made is never answered, until `false`.
    package func stallChannelAnswers(_ stall: Bool) {
        broadcast.withLock { $0.stallCreates = stall }
    }

    /// A Live Activity started by push: the device, when (the budget's clock), the channel it
    /// follows (`input-push-channel`, iOS 18) or none (`input-push-token`: its own token), and the
    /// start's `apns-id`.
    package struct StartedActivity: Sendable, Hashable {
        package var device: String
        package var at: Date
        package var channel: String?
        package var apnsID: String
        package var payload: Data
    }

    /// `POST /1/apps/<bundle>/channels`, `GET` and `DELETE` of one (`apns-channel-id`), and `GET
    /// /1/apps/<bundle>/all-channels`.
    package func channelManagement(
        method: String, bundleID: String, all: Bool, headers: FakeRequestHeaders, body: Data, now: Date
    ) -> FakeReply {
        if let refusal = checkProviderToken(header: { headers[$0] }, now: now) { return refusal }
        let request = [("apns-request-id", headers["apns-request-id"] ?? UUID().text())]
        if all {
            guard method == "GET" else { return .apnsError(405, "MethodNotAllowed") }
            let ids = broadcast.withLock { $0.byBundle[bundleID] ?? [] }
            return .json(200, ["channels": ids], headers: request)
        }
        switch method {
        case "POST":
            guard let object = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] else {
                return .apnsError(400, "BadRequest")
            }
            guard let policy = object["message-storage-policy"] as? Int, policy == 0 || policy == 1 else {
                return .apnsError(400, "BadMessageStoragePolicy")
            }
            guard object["push-type"] as? String == "LiveActivity" else { return .apnsError(400, "InvalidPushType") }
            let limit = configuration.channelLimit
            let id: String? = broadcast.withLock { ledger in
                guard (ledger.byBundle[bundleID]?.count ?? 0) < limit else { return nil }
                // Opaque, base64, of no fixed size: as Apple's are.
                var bytes = [UInt8](repeating: 0, count: 16)
                for index in bytes.indices { bytes[index] = UInt8.random(in: 0...255) }
                let id = Data(bytes).base64EncodedString()
                ledger.channels[id] = FakeChannel(id: id, bundleID: bundleID, policy: policy)
                ledger.byBundle[bundleID, default: []].append(id)
                ledger.created += 1
                return id
            }
            guard let id else { return .apnsError(400, "TooManyChannels") }
            if broadcast.withLock({ $0.stallCreates }) { return .stall }
            return .respond(status: 201, headers: request + [("apns-channel-id", id)], body: Data())
        case "GET", "DELETE":
            guard let id = headers["apns-channel-id"], !id.isEmpty else { return .apnsError(400, "MissingChannelId") }
            let found: FakeChannel? = broadcast.withLock { ledger in
                guard let channel = ledger.channels[id], channel.bundleID == bundleID else { return nil }
                if method == "DELETE" {
                    ledger.channels[id] = nil
                    ledger.byBundle[bundleID]?.removeAll { $0 == id }
                    ledger.deleted += 1
                }
                return channel
            }
            guard let found else { return .apnsError(400, "ChannelNotRegistered") }
            if method == "DELETE" { return .respond(status: 204, headers: request, body: Data()) }
            return .json(
                200, ["message-storage-policy": found.policy, "push-type": "LiveActivity"], headers: request)
        default:
            return .apnsError(405, "MethodNotAllowed")
        }
    }

    /// `POST /4/broadcasts/apps/<bundle>`: checked in the order APNs checks (the provider token,
    /// then `MissingChannelId`, `MissingPushType`, `InvalidPushType`, `BadExpirationDate`,
    /// `BadPriority`, `ChannelNotRegistered`, `PayloadEmpty`, 413 above 5,120 bytes); a channel that
    /// stores no message takes only `apns-expiration: 0`.
    package func broadcast(bundleID: String, headers: FakeRequestHeaders, body: Data, now: Date) -> FakeReply {
        if let refusal = checkProviderToken(header: { headers[$0] }, now: now) { return refusal }
        guard let channelID = headers["apns-channel-id"], !channelID.isEmpty else {
            return .apnsError(400, "MissingChannelId")
        }
        guard let pushType = headers["apns-push-type"] else { return .apnsError(400, "MissingPushType") }
        guard pushType == "liveactivity" else { return .apnsError(400, "InvalidPushType") }
        guard let expirationText = headers["apns-expiration"], let expiration = Int(expirationText) else {
            return .apnsError(400, "BadExpirationDate")
        }
        guard let priorityText = headers["apns-priority"], let priority = Int(priorityText),
            [1, 5, 10].contains(priority)
        else { return .apnsError(400, "BadPriority") }
        let channel = broadcast.withLock { ledger in
            ledger.channels[channelID].flatMap { $0.bundleID == bundleID ? $0 : nil }
        }
        guard let channel else { return .apnsError(400, "ChannelNotRegistered") }
        if channel.policy == 0 && expiration != 0 { return .apnsError(400, "BadExpirationDate") }
        guard !body.isEmpty,
            let object = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any],
            object["aps"] is [String: Any]
        else { return .apnsError(400, "PayloadEmpty") }
        guard body.count <= 5120 else { return .apnsError(413, "PayloadTooLarge") }
        let apnsID = (headers["apns-id"] ?? UUID().text()).lowercased()
        let at = configuration.clock()
        broadcast.withLock { ledger in
            ledger.channels[channelID]?.broadcasts += 1
            let reached = ledger.channels[channelID]?.subscribers.count ?? 0
            if ledger.broadcasts[apnsID] == nil {
                ledger.order.append(apnsID)
                ledger.broadcasts[apnsID] = AcceptedBroadcast(
                    apnsID: apnsID, channelID: channelID, priority: priority, reached: reached, count: 0,
                    payload: body, at: at)
            }
            ledger.broadcasts[apnsID]!.count += 1
        }
        return .respond(
            status: 200,
            headers: [
                ("apns-request-id", headers["apns-request-id"] ?? UUID().text()), ("apns-unique-id", UUID().text()),
                ("apns-id", apnsID),
            ], body: Data())
    }

    /// A device's Live Activity subscribed to `channelID` (the app started it with
    /// `pushType: .channel(id)`, or a push-to-start named the channel): whether the channel exists.
    @discardableResult
    package func subscribe(device: String, to channelID: String) -> Bool {
        broadcast.withLock { ledger in
            guard ledger.channels[channelID] != nil else { return false }
            ledger.channels[channelID]!.subscribers.insert(device.lowercased())
            return true
        }
    }

    /// The `aps` of a push-to-start (`event: start`); nil for any other push.
    static func start(_ payload: Data) -> [String: Any]? {
        // Most pushes are not starts: the bytes are looked for before the JSON is read.
        guard payload.range(of: Data("\"start\"".utf8)) != nil,
            let object = (try? JSONSerialization.jsonObject(with: payload)) as? [String: Any],
            let aps = object["aps"] as? [String: Any], aps["event"] as? String == "start"
        else { return nil }
        return aps
    }

    /// Whether one more start on `device` would pass its push-to-start budget
    /// (``FakeProviderConfiguration/startBudget`` in any `startWindow`, on the budget's clock).
    func startBudgetSpent(device: String) -> Bool {
        guard let budget = configuration.startBudget else { return false }
        let now = configuration.clock()
        return broadcast.withLock { ledger in
            let recent = (ledger.startTimes[device.lowercased()] ?? []).filter {
                now.timeIntervalSince($0) < configuration.startWindow
            }
            if recent.count >= budget { ledger.refusedStarts += 1 }
            return recent.count >= budget
        }
    }

    /// A push-to-start accepted for `device`: counted against its budget, and its activity follows
    /// the channel the payload names (`input-push-channel`, iOS 18), if any.
    func startedActivity(device: String, aps: [String: Any], apnsID: String, payload: Data) {
        let channel = aps["input-push-channel"] as? String
        let at = configuration.clock()
        broadcast.withLock { ledger in
            ledger.startTimes[device.lowercased(), default: []].append(at)
            ledger.starts.append(
                StartedActivity(device: device.lowercased(), at: at, channel: channel, apnsID: apnsID, payload: payload)
            )
        }
        if let channel { subscribe(device: device, to: channel) }
    }

    /// Every push-to-start accepted, in order (a resend of one is listed again), and how many were
    /// refused for the budget.
    package var startedActivities: (accepted: [StartedActivity], refused: Int) {
        broadcast.withLock { ($0.starts, $0.refusedStarts) }
    }

    /// Every broadcast accepted, in order of first acceptance.
    package var acceptedBroadcasts: [AcceptedBroadcast] {
        broadcast.withLock { ledger in ledger.order.map { ledger.broadcasts[$0]! } }
    }

    /// Each channel of `bundleID` with its subscribers and broadcasts.
    package func channels(of bundleID: String) -> [(id: String, subscribers: Int, broadcasts: Int, policy: Int)] {
        broadcast.withLock { ledger in
            (ledger.byBundle[bundleID] ?? []).compactMap { id in
                ledger.channels[id].map { (id, $0.subscribers.count, $0.broadcasts, $0.policy) }
            }
        }
    }

    /// Channels made and deleted since start (or the last reset), and open now.
    package var channelCounts: (created: Int, deleted: Int, open: Int) {
        broadcast.withLock { ($0.created, $0.deleted, $0.channels.count) }
    }
}
