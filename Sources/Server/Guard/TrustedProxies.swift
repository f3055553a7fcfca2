import Foundation
import HTTPTypes
import NIOCore

/// The reverse proxies the server believes about who the client is (`proxy.trusted`): only a
/// connection from one of them has its client read from the forwarding header the proxy sets
/// (`proxy.header`: `X-Forwarded-For`, or RFC 7239's `Forwarded`), taking the right-most hop
/// that is not itself a trusted proxy — the address the last trusted proxy saw, whatever a client
/// wrote to the left of it. From any other peer the header changes nothing: the peer is the
/// client. Every per-client limit, log line and share uses the client this answers.
package struct TrustedProxies: Sendable, Equatable {
    /// The header the proxies set.
    package enum Header: String, Sendable, CaseIterable {
        case xForwardedFor = "x-forwarded-for"
        case forwarded
    }

    /// One network: its address bytes (4 or 16) and how many leading bits count.
    package struct Network: Sendable, Equatable, CustomStringConvertible {
        let bytes: [UInt8]
        let prefix: Int

        /// `address` or `address/prefix`, IPv4 or IPv6; the error says what is wrong.
        package init(_ text: String) throws(TrustedProxies.Failure) {
            let parts = text.split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count <= 2, let address = TrustedProxies.bytes(String(parts[0])) else {
                throw Failure(text: text, reason: "is not an IP address or network (such as 10.0.0.0/8 or fd00::/8)")
            }
            let bits = address.count * 8
            var prefix = bits
            if parts.count == 2 {
                guard parts[1].allSatisfy(\.isNumber), let given = Int(parts[1]), (0...bits).contains(given) else {
                    throw Failure(text: text, reason: "has a prefix length that is not 0 to \(bits)")
                }
                prefix = given
            }
            self.bytes = address
            self.prefix = prefix
        }

        func contains(_ address: [UInt8]) -> Bool {
            guard address.count == bytes.count else { return false }
            var left = prefix
            for (mine, theirs) in zip(bytes, address) where left > 0 {
                let mask: UInt8 = left >= 8 ? 0xFF : ~(0xFF >> UInt8(left))
                guard mine & mask == theirs & mask else { return false }
                left -= 8
            }
            return true
        }

        package var description: String {
            let groups = stride(from: 0, to: bytes.count, by: 2).map { UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]) }
            let address =
                bytes.count == 4
                ? bytes.map(String.init).joined(separator: ".")
                : groups.map { String($0, radix: 16) }.joined(separator: ":")
            return prefix == bytes.count * 8 ? address : "\(address)/\(prefix)"
        }
    }

    /// A network that could not be read.
    package struct Failure: Error, Sendable, CustomStringConvertible {
        let text: String
        let reason: String
        package var description: String { "proxy.trusted: '\(text.prefix(80))' \(reason)" }
    }

    package var networks: [Network] = []
    package var header: Header = .xForwardedFor

    package init() {}

    package init(_ networks: [String], header: Header = .xForwardedFor) throws(Failure) {
        self.networks = try networks.map { (text) throws(Failure) in try Network(text) }
        self.header = header
    }

    package var isEmpty: Bool { networks.isEmpty }

    /// Whether `address` is one of the trusted proxies.
    package func trusts(_ address: SocketAddress?) -> Bool {
        guard !networks.isEmpty, let bytes = Self.bytes(address) else { return false }
        return trusts(bytes)
    }

    func trusts(_ bytes: [UInt8]) -> Bool { networks.contains { $0.contains(bytes) } }

    /// The client a request counts against (``ConnectionGate/clientKey(_:)``'s form): from a
    /// trusted peer, the forwarding header's hops read from the right, up to the first that is not
    /// a trusted proxy (the left-most when every one is). Only the hops a trusted proxy wrote are
    /// read: what a client wrote to the left of its own address, readable or not, changes nothing.
    /// A hop that cannot be read (`unknown`, an obfuscated name) before an untrusted one is found,
    /// or no header: the peer.
    package func client(peer: SocketAddress?, headers: HTTPFields) -> String {
        let peerKey = ConnectionGate.clientKey(peer)
        guard trusts(peer) else { return peerKey }
        let name = HTTPField.Name(header.rawValue)!
        let elements = headers[values: name].flatMap { $0.split(separator: ",", omittingEmptySubsequences: false) }
        var leftmost: [UInt8]?
        for element in elements.reversed() {
            guard let hop = hopAddress(element) else { return peerKey }
            guard trusts(hop) else { return Self.key(hop) }
            leftmost = hop
        }
        return leftmost.map(Self.key) ?? peerKey
    }

    /// One hop's address: an X-Forwarded-For element, or the `for=` of a `Forwarded` element
    /// (quoted, IPv6 in brackets, with or without a port); nil for an unknown or obfuscated
    /// identifier, or anything else (the whole header is then not believed).
    func hopAddress(_ element: Substring) -> [UInt8]? {
        let trimmed = element.trimmingCharacters(in: .whitespaces)
        switch header {
        case .xForwardedFor:
            return Self.bytes(Self.withoutPort(trimmed))
        case .forwarded:
            for pair in trimmed.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                guard parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces).lowercased() == "for" else {
                    continue
                }
                var value = parts[1].trimmingCharacters(in: .whitespaces)
                if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") {
                    value = String(value.dropFirst().dropLast())
                }
                return Self.bytes(Self.withoutPort(value))
            }
            return nil
        }
    }

    /// `[v6]:port` → `v6`, `[v6]` → `v6`, `v4:port` → `v4`; anything else as it is.
    static func withoutPort(_ text: String) -> String {
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            return String(text[text.index(after: text.startIndex)..<close])
        }
        if text.filter({ $0 == ":" }).count == 1, let colon = text.firstIndex(of: ":") {
            return String(text[..<colon])
        }
        return text
    }

    /// The address's bytes (4 for IPv4, IPv4-mapped IPv6 included; 16 for IPv6), or nil.
    static func bytes(_ text: String) -> [UInt8]? {
        guard !text.isEmpty, text.count <= 64, text.allSatisfy({ $0.isHexDigit || $0 == "." || $0 == ":" }),
            let address = try? SocketAddress(ipAddress: text, port: 0)
        else { return nil }
        return bytes(address)
    }

    static func bytes(_ address: SocketAddress?) -> [UInt8]? {
        switch address {
        case .v4(let v4):
            var raw = v4.address.sin_addr
            return withUnsafeBytes(of: &raw) { Array($0) }
        case .v6(let v6):
            var raw = v6.address.sin6_addr
            let bytes = withUnsafeBytes(of: &raw) { Array($0) }
            if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF {
                return Array(bytes[12..<16])
            }
            return bytes
        default:
            return nil
        }
    }

    /// The client key of an address's bytes: as ``ConnectionGate/clientKey(_:)`` makes it.
    static func key(_ bytes: [UInt8]) -> String {
        if bytes.count == 4 { return bytes.map(String.init).joined(separator: ".") }
        return stride(from: 0, to: 8, by: 1).map { String(bytes[$0], radix: 16) }.joined(separator: ":") + "::/64"
    }
}
