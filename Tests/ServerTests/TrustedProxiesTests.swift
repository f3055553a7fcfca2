import HTTPTypes
import NIOCore
import TestSupport
import Testing

@testable import Server

/// Who the client is behind a reverse proxy (issue 58): only a trusted peer's forwarding header is
/// read, and only its right-most untrusted hop, so that a client cannot name itself another.
@Suite struct TrustedProxiesTests {
    static func peer(_ ip: String) -> SocketAddress { try! SocketAddress(ipAddress: ip, port: 40_000) }

    static func headers(_ name: String, _ values: [String]) -> HTTPFields {
        var fields = HTTPFields()
        for value in values { fields.append(HTTPField(name: HTTPField.Name(name)!, value: value)) }
        return fields
    }

    @Test(arguments: [
        ("127.0.0.1", "127.0.0.1"), ("10.0.0.0/8", "10.0.0.0/8"), ("::1", "0:0:0:0:0:0:0:1"),
        ("fd00::/8", "fd00:0:0:0:0:0:0:0/8"), ("0.0.0.0/0", "0.0.0.0/0"), ("192.168.1.7/32", "192.168.1.7"),
    ])
    func networksAreRead(text: String, read: String) throws {
        #expect(try TrustedProxies.Network(text).description == read)
    }

    @Test(arguments: [
        ("localhost", "is not an IP address"), ("10.0.0.0/33", "prefix length that is not 0 to 32"),
        ("::1/129", "0 to 128"), ("10.0.0.0/", "prefix length"), ("10.0.0.0/8/8", "is not an IP address"),
        ("", "is not an IP address"), ("10.0.0.0/+8", "prefix length"), ("1.2.3.4\u{0}", "is not an IP address"),
    ])
    func badNetworksAreRefusedSayingWhy(text: String, reason: String) {
        do {
            _ = try TrustedProxies([text])
            Issue.record("accepted '\(text)'")
        } catch {
            #expect(error.description.contains(reason), "\(error)")
            #expect(error.description.hasPrefix("proxy.trusted:"), "\(error)")
        }
    }

    @Test func networksMatchByTheirPrefix() throws {
        let proxies = try TrustedProxies(["10.0.0.0/8", "192.168.1.0/25", "fd00::/8", "127.0.0.1"])
        for inside in ["10.255.1.2", "192.168.1.127", "fdab::1", "127.0.0.1", "::ffff:10.1.1.1"] {
            #expect(proxies.trusts(Self.peer(inside)), "\(inside)")
        }
        for outside in ["11.0.0.1", "192.168.1.128", "fe80::1", "127.0.0.2", "::1"] {
            #expect(!proxies.trusts(Self.peer(outside)), "\(outside)")
        }
        #expect(!TrustedProxies().trusts(Self.peer("127.0.0.1")))
    }

    @Test func theClientIsTheRightMostUntrustedHop() throws {
        let proxies = try TrustedProxies(["127.0.0.1", "10.0.0.0/8"])
        let cases: [(peer: String, header: [String], client: String)] = [
            // Through nginx: what the client claimed, then the address nginx saw.
            ("127.0.0.1", ["6.6.6.6, 203.0.113.9"], "203.0.113.9"),
            // Two proxies of the operator's in a row.
            ("127.0.0.1", ["198.51.100.4, 10.1.2.3"], "198.51.100.4"),
            // The header given twice is one list.
            ("127.0.0.1", ["1.1.1.1", "203.0.113.9"], "203.0.113.9"),
            // Every hop trusted: the first.
            ("127.0.0.1", ["10.0.0.5, 10.0.0.6"], "10.0.0.5"),
            // IPv6 with its /64, with and without brackets and port; IPv4 with a port.
            ("127.0.0.1", ["2001:db8:1:2:3:4:5:6"], "20:1:d:b8:0:1:0:2::/64"),
            ("127.0.0.1", ["[2001:db8::1]:4711"], "20:1:d:b8:0:0:0:0::/64"),
            ("127.0.0.1", ["203.0.113.9:51000"], "203.0.113.9"),
            // What the client wrote to the left of its own address, readable or not, is not read.
            ("127.0.0.1", ["not-an-address, 203.0.113.9"], "203.0.113.9"),
            ("127.0.0.1", [", 203.0.113.9"], "203.0.113.9"),
            // A hop a trusted proxy wrote that cannot be read: the peer, not a guess.
            ("127.0.0.1", ["203.0.113.9, not-an-address"], "127.0.0.1"),
            ("127.0.0.1", ["203.0.113.9, 10.0.0.1, unknown"], "127.0.0.1"),
            ("127.0.0.1", [""], "127.0.0.1"),
            ("127.0.0.1", ["unknown"], "127.0.0.1"),
            // From a peer that is not a proxy, the header is nobody's word.
            ("203.0.113.50", ["6.6.6.6"], "203.0.113.50"),
            ("198.51.100.1", ["10.0.0.1"], "198.51.100.1"),
        ]
        for (peer, header, client) in cases {
            let read = proxies.client(peer: Self.peer(peer), headers: Self.headers("X-Forwarded-For", header))
            #expect(read == client, "\(peer) \(header)")
        }
        // No header from a proxy: the proxy itself.
        #expect(proxies.client(peer: Self.peer("127.0.0.1"), headers: [:]) == "127.0.0.1")
        // The other header is not read.
        #expect(
            proxies.client(peer: Self.peer("127.0.0.1"), headers: Self.headers("Forwarded", ["for=203.0.113.9"]))
                == "127.0.0.1")
    }

    @Test func forwardedIsReadAsRFC7239Writes() throws {
        let proxies = try TrustedProxies(["127.0.0.1"], header: .forwarded)
        let cases: [(header: [String], client: String)] = [
            (["for=192.0.2.60;proto=http;by=203.0.113.43"], "192.0.2.60"),
            ([#"For="[2001:db8:cafe::17]:4711""#], "20:1:d:b8:ca:fe:0:0::/64"),
            (["for=192.0.2.43, for=198.51.100.17"], "198.51.100.17"),
            (["for=6.6.6.6", "for=198.51.100.17;proto=https"], "198.51.100.17"),
            (["for=unknown"], "127.0.0.1"),
            (["for=_hidden, for=198.51.100.17"], "198.51.100.17"),
            (["for=198.51.100.17, for=_hidden"], "127.0.0.1"),
            (["proto=https"], "127.0.0.1"),
        ]
        for (header, client) in cases {
            let read = proxies.client(peer: Self.peer("127.0.0.1"), headers: Self.headers("Forwarded", header))
            #expect(read == client, "\(header)")
        }
        #expect(
            proxies.client(peer: Self.peer("127.0.0.1"), headers: Self.headers("X-Forwarded-For", ["192.0.2.1"]))
                == "127.0.0.1")
    }

    /// Generated chains: whatever a client writes before the hops the operator's proxies add, the
    /// client read is the address the first of them saw.
    @Test func whateverAClientWritesItIsTheAddressTheProxySaw() throws {
        let seed = TestSeed.draw()
        print("TrustedProxiesTests seed \(seed)")
        var generator = SplitMix(seed: seed)
        let proxies = try TrustedProxies(["127.0.0.1", "10.0.0.0/8"])
        func address() -> String {
            (0..<4).map { _ in String(Int.random(in: 1...254, using: &generator)) }.joined(separator: ".")
        }
        for _ in 0..<500 {
            var seen = address()
            while seen.hasPrefix("10.") { seen = address() }
            // Anything at all: addresses, words, empty elements.
            let claimed = (0..<Int.random(in: 0...4, using: &generator)).map { _ in
                ["", "unknown", "x", "[::1]:1", address()].randomElement(using: &generator)!
            }
            let operators = (0..<Int.random(in: 0...2, using: &generator)).map { _ in
                "10.\(Int.random(in: 0...255, using: &generator)).0.1"
            }
            let header = (claimed + [seen] + operators).joined(separator: ", ")
            let read = proxies.client(peer: Self.peer("127.0.0.1"), headers: Self.headers("X-Forwarded-For", [header]))
            #expect(read == seen, "seed \(seed): \(header)")
        }
    }

    /// A proxy's own connections are not held to the per-client cap; anyone else's are.
    @Test func aProxyIsNotOneClientAtTheGate() throws {
        var limits = ConnectionLimits()
        limits.maxConnectionsPerClient = 2
        limits.trustedProxies = try TrustedProxies(["127.0.0.1"])
        let gate = ConnectionGate(limits: limits)
        for _ in 0..<5 {
            guard case .admitted = gate.admit(Self.peer("127.0.0.1")) else {
                Issue.record("the proxy was refused")
                return
            }
        }
        _ = gate.admit(Self.peer("127.0.0.2"))
        _ = gate.admit(Self.peer("127.0.0.2"))
        #expect(gate.admit(Self.peer("127.0.0.2")) == .refused(reason: "2 connections from one client"))
    }
}
