import Alerts
import Foundation

/// How a device's channel is kept in a row — kind, address, environment, topic and two keys — with
/// its secrets (a webhook's signing secret, a push subscription's auth secret) sealed. The same in
/// every store.
struct ChannelColumns: Sendable, Hashable {
    var kind: String
    var address: String
    var environment: String?
    var topic: String?
    var key1: String?
    var key2: String?

    init(kind: String, address: String, environment: String?, topic: String?, key1: String?, key2: String?) {
        self.kind = kind
        self.address = address
        self.environment = environment
        self.topic = topic
        self.key1 = key1
        self.key2 = key2
    }

    /// The columns of `channel`, its secrets sealed with `secrets`.
    init(_ channel: DeviceChannel, sealing secrets: SecretBox) throws {
        let kind = channel.kind.rawValue
        switch channel {
        case .apns(let token, let environment, let topic):
            self.init(
                kind: kind, address: token, environment: environment.rawValue, topic: topic, key1: nil, key2: nil)
        case .liveActivity(let token, let environment, let topic, let bid):
            // The bid the activity shows, if it named one, the first key.
            self.init(
                kind: kind, address: token, environment: environment.rawValue, topic: topic, key1: bid?.key, key2: nil)
        case .liveActivityChannel(let id, let bid, let environment, let topic):
            // The channel id is the address; the bid it follows, the first key.
            self.init(kind: kind, address: id, environment: environment.rawValue, topic: topic, key1: bid, key2: nil)
        case .liveActivityStart(let token, let environment, let topic, let updates):
            // How the activity hears the bid's changes, the first key.
            self.init(
                kind: kind, address: token, environment: environment.rawValue, topic: topic, key1: updates.rawValue,
                key2: nil)
        case .webPush(let endpoint, let p256dh, let auth):
            self.init(
                kind: kind, address: endpoint, environment: nil, topic: nil, key1: p256dh,
                key2: try secrets.seal(auth))
        case .webhook(let url, let secret):
            self.init(
                kind: kind, address: url, environment: nil, topic: nil, key1: try secrets.seal(secret), key2: nil)
        case .console(let label):
            self.init(kind: kind, address: label, environment: nil, topic: nil, key1: nil, key2: nil)
        }
    }

    /// Whether the address is one person's (a push token or subscription), so two active devices
    /// must not share it; webhooks and consoles may.
    var isPersonalAddress: Bool {
        switch ChannelKind(rawValue: kind) {
        case .apns, .liveActivity, .liveActivityChannel, .liveActivityStart, .webPush: true
        case .webhook, .console, nil: false
        }
    }

    /// Refuses a batch in which two devices share a push address (which one would be meant?):
    /// both stores' rule.
    static func refuseSharedAddresses(_ columns: [ChannelColumns]) throws {
        var seen = Set<[String]>()
        for column in columns where column.isPersonalAddress {
            guard seen.insert([column.kind, column.address, column.topic ?? ""]).inserted else {
                throw StoreError.duplicate("two devices in one batch with the same \(column.kind) address")
            }
        }
    }

    /// Why a device holding the same personal address is disabled when `newID` registers it.
    func replacedReason(by newID: UUID) -> String {
        let what =
            switch ChannelKind(rawValue: kind) {
            case .apns: "APNs token"
            case .liveActivity: "Live Activity token"
            case .liveActivityChannel: "broadcast channel"
            case .liveActivityStart: "push-to-start token"
            case .webPush: "Web Push subscription"
            default: "address"
            }
        return "replaced by device \(newID.uuidString): the same \(what) registered again"
    }

    /// The channel these columns keep, its secrets opened; nil when they do not make one.
    func channel(opening secrets: SecretBox) throws -> DeviceChannel? {
        switch ChannelKind(rawValue: kind) {
        case .apns:
            guard let environment = environment.flatMap(APNsEnvironment.init(rawValue:)), let topic else { return nil }
            return .apns(token: address, environment: environment, topic: topic)
        case .liveActivity:
            guard let environment = environment.flatMap(APNsEnvironment.init(rawValue:)), let topic else { return nil }
            return .liveActivity(
                token: address, environment: environment, topic: topic, bid: key1.flatMap(ActivityBid.init(key:)))
        case .liveActivityChannel:
            guard let environment = environment.flatMap(APNsEnvironment.init(rawValue:)), let topic, let key1 else {
                return nil
            }
            return .liveActivityChannel(id: address, bid: key1, environment: environment, topic: topic)
        case .liveActivityStart:
            guard let environment = environment.flatMap(APNsEnvironment.init(rawValue:)), let topic,
                let updates = key1.flatMap(ActivityUpdates.init(rawValue:))
            else { return nil }
            return .liveActivityStart(token: address, environment: environment, topic: topic, updates: updates)
        case .webPush:
            guard let key1, let key2 else { return nil }
            return .webPush(endpoint: address, p256dh: key1, auth: try secrets.open(key2))
        case .webhook:
            guard let key1 else { return nil }
            return .webhook(url: address, secret: try secrets.open(key1))
        case .console:
            return .console(label: address)
        case nil:
            return nil
        }
    }
}

/// The stores' JSON columns (preferences, moments): keys sorted, dates as seconds since 1970, so
/// the same value is always the same text.
enum StoredJSON {
    static func encode<Value: Encodable>(_ value: Value) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        encoder.dateEncodingStrategy = .secondsSince1970
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    static func decode<Value: Decodable>(_ type: Value.Type, _ text: String) throws -> Value {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        do {
            return try decoder.decode(type, from: Data(text.utf8))
        } catch {
            throw StoreError.corrupt("\(type)", reason: "\(error)")
        }
    }
}
