import Alerts
import Crypto
import Foundation

/// A device asking to be registered, as it arrives (from the API or the CLI), before anything
/// about it is trusted.
package struct RegistrationRequest: Sendable, Hashable {
    package var channel: DeviceChannel
    package var preferences: Preferences

    package init(channel: DeviceChannel, preferences: Preferences = Preferences()) {
        self.channel = channel
        self.preferences = preferences
    }
}

/// Why a registration was refused: the field and what is wrong with it.
package struct RegistrationError: Error, Sendable, Hashable, CustomStringConvertible {
    package var field: String
    package var reason: String
    /// Well-formed, but refused by the operator's policy (an endpoint in a private network):
    /// the API answers 403, not 400.
    package var refusedByPolicy: Bool

    package init(field: String, reason: String, refusedByPolicy: Bool = false) {
        self.field = field
        self.reason = reason
        self.refusedByPolicy = refusedByPolicy
    }

    package var description: String { "\(field): \(reason)" }
}

/// What registration hands back: the device to store and the secret for the client, shown once
/// (only its hash is stored).
package struct Registration: Sendable {
    package var device: Device
    package var secret: String
}

/// Checks a registration and builds the device: tokens, endpoints, keys and URLs are refused
/// when malformed, so nothing unusable is ever stored or sent to.
package struct Registrar: Sendable {
    /// Lets webhook URLs and Web Push endpoints point into loopback and private networks (local
    /// demos and tests). Off by default: a public service must not be made to call its own
    /// network.
    package var allowPrivateNetworks = false
    /// The topics (apps' bundle ids) the operator declared; a device's must be one of them. Nil:
    /// any well-formed bundle id.
    package private(set) var topics: Set<String>?
    /// The apps the operator declared, by id: the bundle id and the environment a device of the
    /// app gets when it does not say (a registration may name its app instead of its topic).
    package var apps: [String: (topic: String, environment: APNsEnvironment)] = [:] {
        didSet { topics = apps.isEmpty ? nil : Set(apps.values.map(\.topic)) }
    }

    package init(
        allowPrivateNetworks: Bool = false, apps: [String: (topic: String, environment: APNsEnvironment)] = [:]
    ) {
        self.allowPrivateNetworks = allowPrivateNetworks
        self.apps = apps
        topics = apps.isEmpty ? nil : Set(apps.values.map(\.topic))
    }

    package func register(_ request: RegistrationRequest, id: UUID = UUID(), at date: Date) throws(RegistrationError)
        -> Registration
    {
        let channel = try validated(request.channel)
        let preferences: Preferences
        do {
            preferences = try request.preferences.validated()
        } catch {
            throw RegistrationError(field: "preferences.\(error.field)", reason: error.reason)
        }
        let secret = Self.newSecret()
        let device = Device(
            id: id, channel: channel, preferences: preferences, registeredAt: date,
            secretHash: Self.hash(secret: secret))
        return Registration(device: device, secret: secret)
    }

    /// A topic this server sends to: well-formed, and one of the declared apps' when there are.
    func declared(topic: String) throws(RegistrationError) -> String {
        let topic = try Self.topic(topic)
        if let topics, !topics.contains(topic) {
            throw RegistrationError(
                field: "topic",
                reason: "'\(topic)' is not an app of this server (\(topics.sorted().joined(separator: ", ")))")
        }
        return topic
    }

    /// An app's bundle id, checked as a device's topic is.
    package static func validated(topic: String) throws(RegistrationError) -> String { try Self.topic(topic) }

    /// The channel as it will be stored (tokens lower-cased), or why it is refused.
    package func validated(_ channel: DeviceChannel) throws(RegistrationError) -> DeviceChannel {
        switch channel {
        case .apns(let token, let environment, let topic):
            return .apns(token: try Self.apnsToken(token), environment: environment, topic: try declared(topic: topic))
        case .liveActivity(let token, let environment, let topic, let bid):
            return .liveActivity(
                token: try Self.apnsToken(token), environment: environment, topic: try declared(topic: topic),
                bid: try bid.map(Self.activityBid))
        case .liveActivityStart(let token, let environment, let topic, let updates):
            return .liveActivityStart(
                token: try Self.apnsToken(token), environment: environment, topic: try declared(topic: topic),
                updates: updates)
        case .liveActivityChannel:
            throw RegistrationError(
                field: "channel", reason: "a broadcast channel is made by the service for a game, not registered")
        case .webPush(let endpoint, let p256dh, let auth):
            try checkURL(endpoint, field: "endpoint")
            guard let key = Base64URL.decode(p256dh) else {
                throw RegistrationError(field: "p256dh", reason: "is not base64url")
            }
            guard key.count == 65, key.first == 0x04,
                (try? P256.KeyAgreement.PublicKey(x963Representation: key)) != nil
            else {
                throw RegistrationError(
                    field: "p256dh", reason: "must be an uncompressed P-256 public key (65 bytes on the curve)")
            }
            guard let secret = Base64URL.decode(auth) else {
                throw RegistrationError(field: "auth", reason: "is not base64url")
            }
            guard secret.count == 16 else {
                throw RegistrationError(field: "auth", reason: "must be 16 bytes, not \(secret.count)")
            }
            return channel
        case .webhook(let url, let secret):
            try checkURL(url, field: "url")
            let signing = secret.isEmpty ? StandardWebhooks.newSecret() : secret
            // 24 to 64 bytes, as Standard Webhooks has them.
            let key: SymmetricKey
            do {
                key = try StandardWebhooks.key(fromSecret: signing)
            } catch {
                throw RegistrationError(field: "secret", reason: error.description)
            }
            guard key.bitCount <= 64 * 8 else {
                throw RegistrationError(
                    field: "secret", reason: "a webhook secret is 'whsec_' followed by base64 of 24 to 64 bytes")
            }
            return .webhook(url: url, secret: signing)
        case .console(let label):
            guard !label.isEmpty, label.count <= 64, label.unicodeScalars.allSatisfy({ $0.value >= 0x20 }) else {
                throw RegistrationError(field: "label", reason: "must be 1 to 64 printable characters")
            }
            return channel
        }
    }

    /// A Live Activity's bid as its attributes name it: a game id and a team's abbreviation
    /// (letters, digits, `-` and `_`; at most 64 and 8 characters), the team stored upper-case.
    static func activityBid(_ bid: ActivityBid) throws(RegistrationError) -> ActivityBid {
        func plain(_ value: String) -> Bool {
            value.utf8.allSatisfy {
                (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0)
                    || $0 == 0x2D || $0 == 0x5F
            }
        }
        guard !bid.gameID.isEmpty, bid.gameID.utf8.count <= 64, plain(bid.gameID) else {
            throw RegistrationError(
                field: "game_id",
                reason: "must be the activity's game id (letters, digits, - and _, at most 64), not '\(bid.gameID)'")
        }
        guard !bid.pitchingTeam.isEmpty, bid.pitchingTeam.utf8.count <= 8, plain(bid.pitchingTeam) else {
            throw RegistrationError(
                field: "pitching_team",
                reason: "must be the abbreviation of the team pitching (at most 8 letters, digits, - or _), not "
                    + "'\(bid.pitchingTeam)'")
        }
        return ActivityBid(gameID: bid.gameID, pitchingTeam: bid.pitchingTeam.uppercased())
    }

    /// An APNs device or Live Activity push token: hex, 32 to 100 bytes.
    static func apnsToken(_ token: String) throws(RegistrationError) -> String {
        guard
            token.utf8.allSatisfy({
                (0x30...0x39).contains($0) || (0x61...0x66).contains($0) || (0x41...0x46).contains($0)
            })
        else {
            throw RegistrationError(field: "token", reason: "must be hexadecimal")
        }
        guard token.utf8.count % 2 == 0, (64...200).contains(token.utf8.count) else {
            throw RegistrationError(
                field: "token", reason: "must be 32 to 100 bytes (64 to 200 hex digits), not \(token.utf8.count) digits"
            )
        }
        return token.lowercased()
    }

    /// An app's bundle id: reverse-DNS labels of letters, digits and hyphens.
    static func topic(_ topic: String) throws(RegistrationError) -> String {
        let labels = topic.split(separator: ".", omittingEmptySubsequences: false)
        guard topic.utf8.count <= 155, labels.count >= 2,
            labels.allSatisfy({ label in
                !label.isEmpty
                    && label.unicodeScalars.allSatisfy {
                        $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-")
                    }
            })
        else {
            throw RegistrationError(field: "topic", reason: "must be a bundle id such as com.example.nohit")
        }
        return topic
    }

    /// An https URL with a host, and — unless private networks are allowed — a host that is not
    /// an address (in any numeric form the system resolver reads) or a name of loopback, private,
    /// link-local or otherwise internal networks. A numeric host must be written as four decimal
    /// numbers (or as IPv6). Names are judged by their form only here: what they resolve to is
    /// checked each time a delivery connects (``EndpointGuard``).
    package func checkURL(_ text: String, field: String) throws(RegistrationError) {
        guard text.utf8.count <= 2048, text.hasPrefix("https://"), let url = URLComponents(string: text),
            let host = url.host, !host.isEmpty
        else {
            throw RegistrationError(field: field, reason: "must be an https URL (https://, lower case) with a host")
        }
        guard url.user == nil, url.password == nil else {
            throw RegistrationError(field: field, reason: "must not carry a user name or password")
        }
        if let port = url.port, !(1...65_535).contains(port) {
            throw RegistrationError(field: field, reason: "has no valid port (\(port))")
        }
        guard (try? Regex(Self.urlPattern).wholeMatch(in: text)) != nil else {
            throw RegistrationError(
                field: field,
                reason: "is not a URL this service takes: a host of letters, digits, '.', '-' and '_' (or [IPv6]), "
                    + "then only RFC 3986's characters and whole %XX escapes")
        }
        guard !allowPrivateNetworks else { return }
        // The URL is well formed; which host it names is the operator's policy (403 from the API).
        if let problem = Self.internalRange(host: host) {
            throw RegistrationError(
                field: field, reason: "\(problem) (\(host)); the operator has not allowed private networks",
                refusedByPolicy: true)
        }
    }

    /// The URLs `checkURL` takes (before the operator's policy on hosts), as a regular expression
    /// that Swift and ECMA-262 read alike: the API's document carries it, so the two agree. Lower
    /// case `https://`; a host name of letters, digits, `.`, `-`, `_`, or an IPv6 literal (a zone
    /// as `%25` and its name); a port
    /// of 1-65535; then path, query and fragment of RFC 3986's characters and whole `%XX` escapes.
    package static let urlPattern =
        "^https://(?:[A-Za-z0-9._-]+|\\[[0-9A-Fa-f:.]+(?:%25[A-Za-z0-9._~-]+)?\\])"
        + "(?::(?:0*(?:[1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5]))?)?"
        + "(?:/(?:[A-Za-z0-9._~!$&'()*+,;=:@/-]|%[0-9A-Fa-f]{2})*)?"
        + "(?:\\?(?:[A-Za-z0-9._~!$&'()*+,;=:@/?-]|%[0-9A-Fa-f]{2})*)?"
        + "(?:#(?:[A-Za-z0-9._~!$&'()*+,;=:@/?-]|%[0-9A-Fa-f]{2})*)?$"

    /// What is wrong with `host` as a public endpoint's host, if anything: the internal range it
    /// names, a local network name, or a numeric form that is not canonical.
    package static func internalRange(host: String) -> String? {
        switch IPAddress.read(host: host) {
        case .invalid(let reason):
            return "is not a valid host: \(reason)"
        case .ipv4(let address, let canonical):
            if let range = address.internalRange { return "points into \(range)" }
            if !canonical { return "writes the address \(address) in a form other than four decimal numbers" }
            return nil
        case .ipv6(let address):
            return address.internalRange.map { "points into \($0)" }
        case .name(let name):
            if name == "localhost" || name.hasSuffix(".localhost") { return "points into loopback" }
            let local = [".local", ".internal", ".lan", ".home.arpa", ".localdomain", ".intranet", ".corp"]
            if !name.contains(".") || local.contains(where: { name.hasSuffix($0) }) {
                return "points into a local network name"
            }
            return nil
        }
    }

    /// A fresh device secret: 32 random bytes, base64url.
    package static func newSecret() -> String {
        Base64URL.encode(SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) })
    }

    /// SHA-256 of the secret (hex), the form in which it is stored.
    package static func hash(secret: String) -> String {
        SHA256.hash(data: Data(secret.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    /// Whether `secret` is the device's (constant-time over the hashes).
    package static func verify(secret: String, of device: Device) -> Bool {
        constantTimeEqual(hash(secret: secret), device.secretHash)
    }

    /// Whether two tokens are equal, in a time that tells nothing of either: their SHA-256
    /// digests (always 32 bytes) are compared without stopping at the first difference.
    package static func constantTimeEqual(_ given: String, _ expected: String) -> Bool {
        let a = Array(SHA256.hash(data: Data(given.utf8)))
        let b = Array(SHA256.hash(data: Data(expected.utf8)))
        var difference: UInt8 = 0
        for index in 0..<a.count { difference |= a[index] ^ b[index] }
        return difference == 0
    }
}
