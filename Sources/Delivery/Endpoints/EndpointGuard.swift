import NIOCore
import NIOPosix

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Turns a host name into the addresses to connect to: the system's resolver, or a test's own
/// (tests never look up real names).
package protocol HostResolver: Sendable {
    /// Every address of `host` (a name or a numeric form), for TCP to `port`.
    func addresses(of host: String, port: Int) async throws -> [SocketAddress]
}

/// The system's resolver (`getaddrinfo`), off the event loops on NIO's thread pool.
package struct SystemHostResolver: HostResolver {
    package init() {}

    package func addresses(of host: String, port: Int) async throws -> [SocketAddress] {
        try await NIOThreadPool.singleton.runIfActive {
            var hints = addrinfo()
            hints.ai_family = AF_UNSPEC
            #if canImport(Glibc)
                hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
            #else
                hints.ai_socktype = SOCK_STREAM
            #endif
            var list: UnsafeMutablePointer<addrinfo>?
            let status = getaddrinfo(host, String(port), &hints, &list)
            guard status == 0, let first = list else {
                throw EndpointRefusal(
                    host: host, reason: "cannot be resolved (\(String(cString: gai_strerror(status))))")
            }
            defer { freeaddrinfo(first) }
            var addresses: [SocketAddress] = []
            var next: UnsafeMutablePointer<addrinfo>? = first
            while let entry = next {
                if let address = entry.pointee.ai_addr {
                    switch entry.pointee.ai_family {
                    case AF_INET:
                        address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                            addresses.append(SocketAddress($0.pointee, host: host))
                        }
                    case AF_INET6:
                        address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                            addresses.append(SocketAddress($0.pointee, host: host))
                        }
                    default: break
                    }
                }
                next = entry.pointee.ai_next
            }
            return addresses
        }
    }
}

/// Why a user-supplied endpoint was not connected to.
package struct EndpointRefusal: Error, Sendable, Hashable, CustomStringConvertible {
    package var host: String
    package var reason: String
    /// The name resolves, but only into networks the service must not reach (as opposed to a
    /// name that does not resolve now, which may later).
    package var isInternal: Bool

    package init(host: String, reason: String, isInternal: Bool = false) {
        self.host = host
        self.reason = reason
        self.isInternal = isInternal
    }

    package var description: String { "\(host) \(reason)" }
}

/// Decides, when a connection is made, which addresses of a user-supplied endpoint (a webhook
/// URL, a Web Push service) may be connected to: the name is resolved here, every address it
/// resolves to is checked, and only public ones are returned — so a name that resolves (or is
/// re-pointed, DNS rebinding) into loopback, a private network, link-local (cloud metadata),
/// carrier-grade NAT, NAT64 of those, multicast or reserved space is never reached. The
/// connection is then made to the checked address itself, not to the name again.
///
/// With `allowPrivateNetworks` (the operator's choice, for local demos and tests) every address
/// is allowed.
package struct EndpointGuard: Sendable {
    package var resolver: any HostResolver
    package var allowPrivateNetworks: Bool
    /// Endpoints the operator named (the fake provider of a demo): reached wherever they are.
    package var trusted: Set<Endpoint> = []

    /// A host and port.
    package struct Endpoint: Sendable, Hashable {
        package var host: String
        package var port: Int

        package init(host: String, port: Int) {
            self.host = host.lowercased()
            self.port = port
        }
    }

    package init(resolver: any HostResolver = SystemHostResolver(), allowPrivateNetworks: Bool = false) {
        self.resolver = resolver
        self.allowPrivateNetworks = allowPrivateNetworks
    }

    /// The addresses of `host` that may be connected to, in the resolver's order.
    package func addresses(host: String, port: Int) async throws(EndpointRefusal) -> [SocketAddress] {
        let all: [SocketAddress]
        do {
            all = try await resolver.addresses(of: host, port: port)
        } catch let refusal as EndpointRefusal {
            throw refusal
        } catch {
            throw EndpointRefusal(host: host, reason: "cannot be resolved (\(error))")
        }
        guard !all.isEmpty else { throw EndpointRefusal(host: host, reason: "has no addresses") }
        if allowPrivateNetworks || trusted.contains(Endpoint(host: host, port: port)) { return all }
        var allowed: [SocketAddress] = []
        var refused: [String] = []
        for address in all {
            guard let ip = Self.ipAddress(of: address) else {
                refused.append("\(address) (not an IP address)")
                continue
            }
            if let range = ip.internalRange {
                refused.append("\(ip) (\(range))")
            } else {
                allowed.append(address)
            }
        }
        guard !allowed.isEmpty else {
            throw EndpointRefusal(
                host: host,
                reason:
                    "resolves only to internal addresses: \(refused.joined(separator: ", ")); the operator has not "
                    + "allowed private networks", isInternal: true)
        }
        return allowed
    }

    /// The bytes of an IPv4 or IPv6 socket address.
    package static func ipAddress(of address: SocketAddress) -> IPAddress? {
        switch address {
        case .v4(let v4):
            var raw = v4.address.sin_addr
            return IPAddress(bytes: withUnsafeBytes(of: &raw) { Array($0) })
        case .v6(let v6):
            var raw = v6.address.sin6_addr
            return IPAddress(bytes: withUnsafeBytes(of: &raw) { Array($0) })
        default:
            return nil
        }
    }
}

/// A resolver that knows only the names it is given, for tests: anything else cannot be
/// resolved, so nothing is ever looked up on the real network.
package struct StaticHostResolver: HostResolver {
    package var names: [String: [String]]

    package init(_ names: [String: [String]]) {
        self.names = names
    }

    package func addresses(of host: String, port: Int) async throws -> [SocketAddress] {
        let key = host.lowercased()
        if let known = names[key] {
            return try known.map { try SocketAddress(ipAddress: $0, port: port) }
        }
        // Numeric hosts resolve to themselves, in every form the system resolver reads.
        switch IPAddress.read(host: key) {
        case .ipv4(let address, _), .ipv6(let address):
            return [try SocketAddress(ipAddress: address.description, port: port)]
        case .name, .invalid:
            throw EndpointRefusal(host: host, reason: "cannot be resolved (not a name this resolver knows)")
        }
    }
}
