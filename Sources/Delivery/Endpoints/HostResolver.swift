import NIOCore
import NIOPosix

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
