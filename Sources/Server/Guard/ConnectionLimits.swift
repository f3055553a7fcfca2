import NIOCore

/// What one server accepts from its clients, so that hostile ones (idle sockets by the thousand,
/// headers trickled a byte at a time, oversized or malformed requests) cannot take it from the
/// others. Every value is a setting (`http.*`, see docs/configuration.md).
package struct ConnectionLimits: Sendable {
    /// Open connections in all; more are answered 503 and closed at once (not left in the
    /// kernel's backlog, where they would hold up everyone's connections).
    package var maxConnections = 10_000
    /// Open connections from one client (one IPv4 address, one IPv6 /64); 0 for no limit (a
    /// server behind a proxy sees one address for everyone).
    package var maxConnectionsPerClient = 256
    /// A connection whose first request head has not arrived by then is closed.
    package var headerTimeout = TimeAmount.seconds(10)
    /// A connection with no request in progress for this long is closed (a live stream is a
    /// request in progress).
    package var idleTimeout = TimeAmount.seconds(75)
    /// A request body has this long from its head before its pace is looked at; then it must have
    /// brought `minimumBodyRate` bytes a second since, or its connection is closed (as nginx's
    /// `client_body_timeout`): 10,000 bodies trickled a byte every few seconds cannot hold the
    /// connections and the bytes every request shares.
    package var bodyTimeout = TimeAmount.seconds(10)
    package var minimumBodyRate = 1024
    /// A connection still without its first head after this share of `headerTimeout` (or a body
    /// behind its pace after this share of `bodyTimeout`) is as idle as a keep-alive one: the
    /// first closed at the cap. A fifth; tests set a smaller share of a longer timeout, so that a
    /// loaded machine's slowness is not taken for the timeout.
    package var slowShare = 0.2
    /// A request head larger than this is answered 431 and the connection closed.
    package var maxHeaderBytes = 16 * 1024
    /// A request with more header fields than this is answered 431 and the connection closed.
    package var maxHeaderCount = 100
    /// A client that broke the protocol `abuseStrikes` times within `abuseWindow` (requests the
    /// decoder could not read, HTTP/2 connections closed for a protocol error: rapid resets,
    /// stream floods) has its new connections refused (503) for this long; zero for never (a
    /// server behind a proxy sees one address for everyone).
    package var abusePenalty = TimeAmount.seconds(30)
    package var abuseStrikes = 5
    /// The span `abuseStrikes` are counted in: a minute.
    package var abuseWindow = TimeAmount.minutes(1)
    /// Live-stream clients (SSE and WebSocket together); more are answered 503.
    package var maxStreams = 20_000
    /// Connections the kernel completes before the server accepts them (the listen backlog,
    /// capped by `net.core.somaxconn`): room for a burst from one client without the others'
    /// handshakes being dropped and retried a second later.
    package var backlog = 4096
    /// File descriptors kept free for the database and the deliveries: the connection limit is
    /// lowered to fit under the process's open-file limit minus this.
    package var fileDescriptorReserve = 512
    /// The reverse proxies whose forwarding header names the client (`proxy.trusted`,
    /// `proxy.header`): every per-client limit counts that client, and a proxy's own connections
    /// are held to no per-client cap and never barred (it carries everyone's).
    package var trustedProxies = TrustedProxies()

    package init() {}

    /// `maxConnections`, lowered to leave `fileDescriptorReserve` under the open-file limit.
    package var effectiveMaxConnections: Int {
        guard let limit = Self.openFileLimit() else { return maxConnections }
        return max(1, min(maxConnections, limit - fileDescriptorReserve))
    }

    /// Raises the process's soft open-file limit to its hard limit (a live stream holds one
    /// descriptor per client: 20,000 clients need more than the usual soft limit); returns the
    /// limit before and after, or nil when it was already there or could not be read or raised.
    package static func raiseOpenFileLimit() -> (before: Int, after: Int)? {
        var limit = rlimit()
        #if canImport(Glibc)
            let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        #else
            let resource = RLIMIT_NOFILE
        #endif
        guard getrlimit(resource, &limit) == 0, limit.rlim_cur < limit.rlim_max else { return nil }
        let before = limit.rlim_cur
        var raised = limit
        raised.rlim_cur = limit.rlim_max
        guard setrlimit(resource, &raised) == 0 else { return nil }
        func int(_ value: rlim_t) -> Int { value > rlim_t(Int.max) ? Int.max : Int(value) }
        return (int(before), int(raised.rlim_cur))
    }

    /// The process's soft open-file limit.
    static func openFileLimit() -> Int? {
        var limit = rlimit()
        #if canImport(Glibc)
            guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return nil }
        #else
            guard getrlimit(RLIMIT_NOFILE, &limit) == 0 else { return nil }
        #endif
        return limit.rlim_cur > UInt64(Int.max) ? Int.max : Int(limit.rlim_cur)
    }
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
