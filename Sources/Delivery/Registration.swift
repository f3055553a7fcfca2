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

    package init(field: String, reason: String) {
        self.field = field
        self.reason = reason
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

    package init(allowPrivateNetworks: Bool = false) {
        self.allowPrivateNetworks = allowPrivateNetworks
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

    /// The channel as it will be stored (tokens lower-cased), or why it is refused.
    package func validated(_ channel: DeviceChannel) throws(RegistrationError) -> DeviceChannel {
        switch channel {
        case .apns(let token, let environment, let topic):
            return .apns(token: try Self.apnsToken(token), environment: environment, topic: try Self.topic(topic))
        case .liveActivity(let token, let environment, let topic):
            return .liveActivity(
                token: try Self.apnsToken(token), environment: environment, topic: try Self.topic(topic))
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
            do {
                _ = try StandardWebhooks.key(fromSecret: signing)
            } catch {
                throw RegistrationError(field: "secret", reason: error.description)
            }
            return .webhook(url: url, secret: signing)
        case .console(let label):
            guard !label.isEmpty, label.count <= 64, label.unicodeScalars.allSatisfy({ $0.value >= 0x20 }) else {
                throw RegistrationError(field: "label", reason: "must be 1 to 64 printable characters")
            }
            return channel
        }
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
    /// a name or address of loopback, private, link-local or otherwise internal networks.
    package func checkURL(_ text: String, field: String) throws(RegistrationError) {
        guard text.utf8.count <= 2048, let url = URLComponents(string: text), url.scheme?.lowercased() == "https",
            let host = url.host, !host.isEmpty
        else {
            throw RegistrationError(field: field, reason: "must be an https URL")
        }
        guard url.user == nil, url.password == nil else {
            throw RegistrationError(field: field, reason: "must not carry a user name or password")
        }
        if !allowPrivateNetworks, let range = Self.internalRange(host: host) {
            throw RegistrationError(
                field: field, reason: "points into \(range) (\(host)); the operator has not allowed private networks")
        }
    }

    /// Which internal range `host` names, if any. Names are judged by their form only (DNS is
    /// not consulted here).
    package static func internalRange(host: String) -> String? {
        let host = host.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        if host == "localhost" || host.hasSuffix(".localhost") { return "loopback" }
        if host.hasSuffix(".local") || host.hasSuffix(".internal") || host.hasSuffix(".lan")
            || !host.contains(".")
                && !host.contains(":")
        {
            return "a local network name"
        }
        if let v4 = ipv4(host) { return internalRange(v4) }
        if host.contains(":") {
            guard let v6 = ipv6(host) else { return "an unreadable IPv6 address" }
            if v6 == [UInt8](repeating: 0, count: 15) + [1] { return "loopback" }
            if v6.allSatisfy({ $0 == 0 }) { return "the unspecified address" }
            if v6[0] & 0xFE == 0xFC { return "unique local addresses (fc00::/7)" }
            if v6[0] == 0xFE && v6[1] & 0xC0 == 0x80 { return "link-local addresses (fe80::/10)" }
            if v6[0] == 0xFF { return "multicast" }
            if v6[0..<10].allSatisfy({ $0 == 0 }) && v6[10] == 0xFF && v6[11] == 0xFF {
                return internalRange((v6[12], v6[13], v6[14], v6[15]))
            }
            if v6[0..<12].allSatisfy({ $0 == 0 }) { return "IPv4-compatible addresses" }
        }
        return nil
    }

    private static func internalRange(_ a: (UInt8, UInt8, UInt8, UInt8)) -> String? {
        switch a {
        case (0, _, _, _): "this network (0.0.0.0/8)"
        case (127, _, _, _): "loopback"
        case (10, _, _, _): "a private network (10.0.0.0/8)"
        case (172, 16...31, _, _): "a private network (172.16.0.0/12)"
        case (192, 168, _, _): "a private network (192.168.0.0/16)"
        case (169, 254, _, _): "link-local addresses (169.254.0.0/16)"
        case (100, 64...127, _, _): "shared address space (100.64.0.0/10)"
        case (192, 0, 0, _): "IETF protocol assignments (192.0.0.0/24)"
        case (198, 18...19, _, _): "benchmarking addresses (198.18.0.0/15)"
        case (224...255, _, _, _): "multicast or reserved addresses"
        default: nil
        }
    }

    private static func ipv4(_ host: String) -> (UInt8, UInt8, UInt8, UInt8)? {
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        let bytes = parts.compactMap { part in part.count <= 3 ? UInt8(part) : nil }
        guard bytes.count == 4 else { return nil }
        return (bytes[0], bytes[1], bytes[2], bytes[3])
    }

    private static func ipv6(_ host: String) -> [UInt8]? {
        var address = in6_addr()
        let host = host.split(separator: "%").first.map(String.init) ?? host
        guard inet_pton(AF_INET6, host, &address) == 1 else { return nil }
        return withUnsafeBytes(of: &address) { Array($0) }
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
        let given = Array(hash(secret: secret).utf8)
        let stored = Array(device.secretHash.utf8)
        guard given.count == stored.count else { return false }
        var difference: UInt8 = 0
        for index in given.indices { difference |= given[index] ^ stored[index] }
        return difference == 0
    }
}
