import Delivery
import NIOCore

/// Who may read `/metrics` (the `http.metrics` setting): the counts say how many devices, streams
/// and deliveries the server has, which is the operator's business.
package enum MetricsAccess: String, Sendable, CaseIterable {
    /// Anyone (a server behind a proxy that guards it).
    case open
    /// Clients on loopback only (127.0.0.0/8, ::1): Prometheus on the same host. The default.
    case loopback
    /// Anyone with the admin token (`Authorization: Bearer <admin token>`), as Prometheus'
    /// `authorization` setting sends it.
    case token
    /// Nobody: 404.
    case off

    /// Who may read /metrics unless the operator says otherwise.
    package static let standard = MetricsAccess.loopback

    /// The headers a proxy adds for the client it forwards: a request that carries one came from
    /// elsewhere, whatever address it arrived from.
    package static let forwardingHeaders = ["forwarded", "x-forwarded-for", "x-real-ip"]

    /// Whether a scrape from `address` (nil: no socket, a test through the router) with
    /// `authorization`, carrying the forwarding header `forwardedBy` if any, may read the metrics;
    /// the refusal says why. Behind a proxy on the same host every request arrives from loopback:
    /// one that a proxy forwarded is not the host's own scrape (`/metrics` was public behind the
    /// documented nginx set-up).
    package func check(
        address: SocketAddress?, authorization: String?, adminToken: String?, forwardedBy: String? = nil
    ) -> Refusal? {
        switch self {
        case .open:
            return nil
        case .off:
            return .notFound
        case .loopback:
            if let forwardedBy, Self.isLoopback(address) {
                return .forbidden(
                    "/metrics is served to loopback only (http.metrics), and this request came through a proxy ("
                        + "\(forwardedBy)); scrape the service's own port, or use http.metrics token")
            }
            return Self.isLoopback(address) ? nil : .forbidden("/metrics is served to loopback only (http.metrics)")
        case .token:
            guard let adminToken, !adminToken.isEmpty else {
                return .forbidden("/metrics needs the admin token, and the server has none (http.metrics token)")
            }
            guard let authorization, authorization.hasPrefix("Bearer "),
                Registrar.constantTimeEqual(String(authorization.dropFirst(7)), adminToken)
            else {
                return .unauthorized("/metrics needs the admin token (Authorization: Bearer <token>)")
            }
            return nil
        }
    }

    package enum Refusal: Sendable, Equatable {
        case notFound
        case forbidden(String)
        case unauthorized(String)
    }

    static func isLoopback(_ address: SocketAddress?) -> Bool {
        switch address {
        case .none: return true
        case .v4(let v4): return (UInt32(bigEndian: v4.address.sin_addr.s_addr) >> 24) == 127
        case .v6(let v6):
            var raw = v6.address.sin6_addr
            let bytes = withUnsafeBytes(of: &raw) { Array($0) }
            // ::1, or an IPv4-mapped loopback address (::ffff:127.x.y.z).
            if bytes[0..<15].allSatisfy({ $0 == 0 }) && bytes[15] == 1 { return true }
            return bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF && bytes[12] == 127
        case .some(.unixDomainSocket): return true
        }
    }
}
