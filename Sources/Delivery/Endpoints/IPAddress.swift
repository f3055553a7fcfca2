#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An IP address as its bytes (4 for IPv4, 16 for IPv6), and the networks it belongs to.
///
/// What a host written in a URL means is decided here, as the system resolver would decide it:
/// every numeric form that `inet_aton` accepts (`127.1`, `0177.0.0.1`, `0x7f.0.0.1`,
/// `169.254.43518`) is the address it names, so a URL cannot hide an internal address behind an
/// unusual spelling.
package struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    package let bytes: [UInt8]

    package init?(bytes: [UInt8]) {
        guard bytes.count == 4 || bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    package var isIPv4: Bool { bytes.count == 4 }

    /// Dotted decimal, or RFC 5952 text for IPv6.
    package var description: String {
        if isIPv4 { return bytes.map(String.init).joined(separator: ".") }
        var address = in6_addr()
        withUnsafeMutableBytes(of: &address) { $0.copyBytes(from: bytes) }
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        guard inet_ntop(AF_INET6, &address, &text, socklen_t(text.count)) != nil else { return "?" }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// How a URL's host reads: a name, an address, or a numeric form that is no address.
    package enum HostForm: Sendable, Hashable {
        case name(String)
        /// `canonical` is false for a form other than four decimal numbers (`127.1`, `0x7f.0.0.1`).
        case ipv4(IPAddress, canonical: Bool)
        case ipv6(IPAddress)
        /// Looks numeric but names no address (`256.1.1.1`, `1.2.3.4.5`, `08.1.1.1`).
        case invalid(String)
    }

    /// Reads `host` as URL parsers and `inet_aton` do: a host whose last label is a number (decimal,
    /// octal with a leading 0, or hex with 0x) is an IPv4 address in one of `inet_aton`'s forms
    /// (`a`, `a.b`, `a.b.c`, `a.b.c.d`), or nothing; a host in brackets or with a colon is IPv6.
    package static func read(host: String) -> HostForm {
        var host = host.lowercased()
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host.contains(":") {
            // A zone (`fe80::1%eth0`) names an interface of this machine: never an address to share.
            guard !host.contains("%"), let address = ipv6(host) else {
                return .invalid("'\(host)' is not an IPv6 address")
            }
            return .ipv6(address)
        }
        if host.hasSuffix(".") { host.removeLast() }
        let labels = host.split(separator: ".", omittingEmptySubsequences: false)
        guard let last = labels.last, isNumber(last) else { return .name(host) }
        guard labels.count <= 4, labels.allSatisfy({ !$0.isEmpty }) else {
            return .invalid("'\(host)' is not an IPv4 address")
        }
        var parts: [UInt64] = []
        for label in labels {
            guard let value = number(label) else { return .invalid("'\(host)' is not an IPv4 address") }
            parts.append(value)
        }
        // The last part fills the bytes the others leave: a.b.c.d, a.b.c (16 bits), a.b (24), a (32).
        let leading = parts.dropLast()
        guard leading.allSatisfy({ $0 <= 255 }), let tail = parts.last,
            tail < (UInt64(1) << (8 * (5 - parts.count)))
        else { return .invalid("'\(host)' is not an IPv4 address (a part is too large)") }
        var bytes = leading.map(UInt8.init)
        for shift in stride(from: 8 * (4 - parts.count), through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: tail >> UInt64(shift)))
        }
        let address = IPAddress(bytes: bytes)!
        return .ipv4(address, canonical: address.description == host)
    }

    /// Decimal, or 0x-hex: what makes a label numeric (octal is decimal digits with a leading 0).
    private static func isNumber(_ label: Substring) -> Bool {
        if label.hasPrefix("0x") { return label.dropFirst(2).allSatisfy(\.isHexDigit) }
        return !label.isEmpty && label.allSatisfy { $0.isASCII && $0.isNumber }
    }

    private static func number(_ label: Substring) -> UInt64? {
        guard label.utf8.count <= 40 else { return nil }
        if label.hasPrefix("0x") { return UInt64(label.dropFirst(2), radix: 16) }
        if label.count > 1 && label.hasPrefix("0") { return UInt64(label.dropFirst(), radix: 8) }
        return UInt64(label, radix: 10)
    }

    private static func ipv6(_ text: String) -> IPAddress? {
        var address = in6_addr()
        guard inet_pton(AF_INET6, text, &address) == 1 else { return nil }
        return IPAddress(bytes: withUnsafeBytes(of: &address) { Array($0) })
    }

    /// The internal or special network the address belongs to, by name; nil for a public
    /// unicast address. IPv6 forms that carry an IPv4 address (mapped, compatible, NAT64, 6to4)
    /// are judged by that address.
    package var internalRange: String? {
        isIPv4 ? Self.ipv4Range(bytes) : Self.ipv6Range(bytes)
    }

    private static func ipv4Range(_ b: [UInt8]) -> String? {
        switch (b[0], b[1], b[2]) {
        case (0, _, _): "this network (0.0.0.0/8)"
        case (10, _, _): "a private network (10.0.0.0/8)"
        case (100, 64...127, _): "shared address space (100.64.0.0/10, carrier-grade NAT)"
        case (127, _, _): "loopback (127.0.0.0/8)"
        case (169, 254, _): "link-local addresses (169.254.0.0/16)"
        case (172, 16...31, _): "a private network (172.16.0.0/12)"
        case (192, 0, 0): "IETF protocol assignments (192.0.0.0/24)"
        case (192, 0, 2), (198, 51, 100), (203, 0, 113): "documentation addresses (TEST-NET)"
        case (192, 88, 99): "the 6to4 relay anycast (192.88.99.0/24)"
        case (192, 168, _): "a private network (192.168.0.0/16)"
        case (198, 18...19, _): "benchmarking addresses (198.18.0.0/15)"
        case (224...239, _, _): "multicast (224.0.0.0/4)"
        case (240...255, _, _): "reserved addresses (240.0.0.0/4)"
        default: nil
        }
    }

    private static func ipv6Range(_ b: [UInt8]) -> String? {
        let embedded = Array(b[12..<16])
        if b[0..<15].allSatisfy({ $0 == 0 }) { return b[15] == 1 ? "loopback (::1)" : "the unspecified address (::)" }
        if b[0..<10].allSatisfy({ $0 == 0 }) && b[10] == 0xFF && b[11] == 0xFF {
            return ipv4Range(embedded).map { "\($0), as an IPv4-mapped address" }
        }
        if b[0..<12].allSatisfy({ $0 == 0 }) { return "IPv4-compatible addresses (::/96, deprecated)" }
        if b[0..<12] == [0, 0x64, 0xFF, 0x9B, 0, 0, 0, 0, 0, 0, 0, 0] {
            return ipv4Range(embedded).map { "\($0), through NAT64 (64:ff9b::/96)" }
        }
        if b[0..<6] == [0, 0x64, 0xFF, 0x9B, 0, 1] { return "local-use NAT64 (64:ff9b:1::/48)" }
        if b[0..<8] == [1, 0, 0, 0, 0, 0, 0, 0] { return "the discard prefix (100::/64)" }
        if b[0..<4] == [0x20, 0x01, 0, 0] { return "Teredo tunnelling (2001::/32)" }
        if b[0..<4] == [0x20, 0x01, 0x0D, 0xB8] { return "documentation addresses (2001:db8::/32)" }
        if b[0] == 0x20 && b[1] == 0x02 {
            return ipv4Range(Array(b[2..<6])).map { "\($0), through 6to4 (2002::/16)" }
        }
        if b[0] & 0xFE == 0xFC { return "unique local addresses (fc00::/7)" }
        if b[0] == 0xFE && b[1] & 0xC0 == 0x80 { return "link-local addresses (fe80::/10)" }
        if b[0] == 0xFE && b[1] & 0xC0 == 0xC0 { return "site-local addresses (fec0::/10, deprecated)" }
        if b[0] == 0xFF { return "multicast (ff00::/8)" }
        return nil
    }
}
