import Alerts
import Clocks
import Foundation
import NIOCore
import Synchronization

/// The lean HTTP/2 clients of Web Push, one per push service (origin), made as services are
/// first reached. A service found not to offer HTTP/2 (ALPN) goes over AsyncHTTPClient instead,
/// for `recheckAfter`; then it is asked again, as services change their front ends.
package final class WebPushOrigins: Sendable {
    private enum Route {
        case http2(HTTP2Client)
        case http1(why: String, until: Date)
    }

    private let configuration: HTTP2Client.Configuration
    private let clock: any WallClock
    private let recheckAfter: TimeInterval
    private let routes = Mutex<[String: Route]>([:])
    /// Clients of services found without HTTP/2, to be closed by the next sender.
    private let retired = Mutex<[HTTP2Client]>([])

    package init(
        configuration: HTTP2Client.Configuration = .init(), clock: any WallClock = SystemWallClock(),
        recheckAfter: TimeInterval = 3600
    ) {
        var configuration = configuration
        configuration.unindexedHeaders.formUnion([":path"])
        self.configuration = configuration
        self.clock = clock
        self.recheckAfter = recheckAfter
    }

    /// The lean client for `origin`, or nil when the service is reached over HTTP/1.1.
    func client(for origin: String) -> HTTP2Client? {
        let now = clock.now()
        return routes.withLock { routes in
            switch routes[origin] {
            case .http2(let client): return client
            case .http1(_, let until) where now < until: return nil
            case .http1, nil:
                guard let client = try? HTTP2Client(origin: origin, configuration: configuration) else {
                    routes[origin] = .http1(why: "not an https origin", until: .distantFuture)
                    return nil
                }
                routes[origin] = .http2(client)
                return client
            }
        }
    }

    /// The service at `origin` did not offer HTTP/2: it is reached over HTTP/1.1 until the next check.
    func noHTTP2(at origin: String, why: String) {
        let until = clock.now().addingTimeInterval(recheckAfter)
        let stale: HTTP2Client? = routes.withLock { routes in
            guard case .http2(let client) = routes[origin] else { return nil }
            routes[origin] = .http1(why: why, until: until)
            return client
        }
        if let stale { retired.withLock { $0.append(stale) } }
    }

    /// Closes the clients of services found without HTTP/2 (in the task of whoever sends next,
    /// not in one of their own).
    func closeRetired() async {
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
                if case .http2(let client) = $0 { return client }
                return nil
            }
        }
        for client in clients { await client.shutdown() }
    }
}
