import NIOCore
import NIOPosix

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

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
