import Clocks
import Foundation
import Synchronization

/// The lean HTTP/2 clients of Web Push, one per push service (origin), made as services are
/// first reached. A service found not to offer HTTP/2 (ALPN) goes over HTTP/1.1 instead, for
/// `recheckAfter`; then it is asked again, as services change their front ends.
///
/// Endpoints come from anyone who registers, so the clients are bounded: at most `maxClients`
/// at once (a service beyond them goes over HTTP/1.1 until one is free), and a client unused for
/// `idleAfter` is closed. `idleAfter` is longer than any request's deadline, so a client is never
/// closed under a request in flight.
package final class WebPushOrigins: Sendable {
    private enum Route {
        case http2(HTTP2Client, lastUsed: Date)
        case http1(why: String, until: Date)
    }

    private let configuration: HTTP2Client.Configuration
    private let clock: any WallClock
    private let recheckAfter: TimeInterval
    private let maxClients: Int
    private let idleAfter: TimeInterval
    private let routes = Mutex<[String: Route]>([:])
    /// Clients closed for want of HTTP/2 or of use, to be shut down by the next sender.
    private let retired = Mutex<[HTTP2Client]>([])

    package init(
        configuration: HTTP2Client.Configuration = .init(), clock: any WallClock = SystemWallClock(),
        recheckAfter: TimeInterval = 3600, maxClients: Int = 64, idleAfter: TimeInterval = 120
    ) {
        var configuration = configuration
        configuration.unindexedHeaders.formUnion([":path"])
        self.configuration = configuration
        self.clock = clock
        self.recheckAfter = recheckAfter
        self.maxClients = maxClients
        self.idleAfter = idleAfter
    }

    /// The lean client for `origin`, or nil when the service is reached over HTTP/1.1.
    package func client(for origin: String) -> HTTP2Client? {
        let now = clock.now()
        let (client, idle) = routes.withLock { routes -> (HTTP2Client?, [HTTP2Client]) in
            let idle = Self.release(&routes, now: now, idleAfter: idleAfter)
            switch routes[origin] {
            case .http2(let client, _):
                routes[origin] = .http2(client, lastUsed: now)
                return (client, idle)
            case .http1(_, let until) where now < until:
                return (nil, idle)
            case .http1, nil:
                let open = routes.values.reduce(0) { count, route in
                    if case .http2 = route { return count + 1 }
                    return count
                }
                // Full: over HTTP/1.1 this time, asked again next time.
                guard open < maxClients else { return (nil, idle) }
                guard let client = try? HTTP2Client(origin: origin, configuration: configuration) else {
                    routes[origin] = .http1(why: "not an https origin", until: now.addingTimeInterval(recheckAfter))
                    return (nil, idle)
                }
                routes[origin] = .http2(client, lastUsed: now)
                return (client, idle)
            }
        }
        if !idle.isEmpty { retired.withLock { $0.append(contentsOf: idle) } }
        return client
    }

    /// Takes out the clients unused for `idleAfter` (returned, to be closed) and the HTTP/1.1
    /// routes due for their next check.
    private static func release(_ routes: inout [String: Route], now: Date, idleAfter: TimeInterval) -> [HTTP2Client] {
        var idle: [HTTP2Client] = []
        routes = routes.filter { _, route in
            switch route {
            case .http2(let client, let lastUsed):
                guard now.timeIntervalSince(lastUsed) >= idleAfter else { return true }
                idle.append(client)
                return false
            case .http1(_, let until):
                return now < until
            }
        }
        return idle
    }

    /// Lean clients open now (diagnostics, tests).
    package var openClients: Int {
        routes.withLock { routes in
            routes.values.reduce(0) { count, route in
                if case .http2 = route { return count + 1 }
                return count
            }
        }
    }

    /// Clients waiting to be shut down by the next sender (diagnostics, tests).
    package var retiredClients: Int { retired.withLock { $0.count } }

    /// The service at `origin` did not offer HTTP/2: it is reached over HTTP/1.1 until the next check.
    func noHTTP2(at origin: String, why: String) {
        let until = clock.now().addingTimeInterval(recheckAfter)
        let stale: HTTP2Client? = routes.withLock { routes in
            guard case .http2(let client, _) = routes[origin] else { return nil }
            routes[origin] = .http1(why: why, until: until)
            return client
        }
        if let stale { retired.withLock { $0.append(stale) } }
    }

    /// Closes the clients of services found without HTTP/2 (in the task of whoever sends next,
    /// not in one of their own).
    package func closeRetired() async {
        let clients = retired.withLock { retired in
            defer { retired = [] }
            return retired
        }
        for client in clients { await client.shutdown() }
    }

    /// Origins reached over HTTP/1.1 now, and why (diagnostics, tests); an origin due for its
    /// next check is not among them.
    package var http1Origins: [String: String] {
        let now = clock.now()
        return routes.withLock { routes in
            routes.compactMapValues {
                if case .http1(let why, let until) = $0, now < until { return why }
                return nil
            }
        }
    }

    package func shutdown() async {
        await closeRetired()
        let clients = routes.withLock { routes in
            defer { routes = [:] }
            return routes.values.compactMap {
                if case .http2(let client, _) = $0 { return client }
                return nil
            }
        }
        for client in clients { await client.shutdown() }
    }
}
