import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// The service itself: `/healthz`, `/readyz`, the OpenAPI document, Prometheus' `/metrics` and the web app's
/// configuration (`/api/config`).
struct SiteRoutes: Sendable {
    /// The OpenAPI document as served (with this server's deal rules).
    let document: [UInt8]
    /// The Prometheus text of the moment.
    let scrape: @Sendable () async throws -> [UInt8]
    /// `/readyz`'s checks, made at each request.
    let readiness: @Sendable () async -> Readiness
    /// Who may read it, and the admin token when that is who.
    let metricsAccess: MetricsAccess
    let adminToken: String?
    let configuration: @Sendable () -> ClientConfiguration

    func add(to router: Router<APIRequestContext>) {
        // Alive: the process answers. Ready: its database answers and its source is current.
        router.get("healthz") { _, _ in try API.json(["status": "ok"]) }
        router.get("readyz") { [readiness] _, _ in
            let readiness = await readiness()
            var response = try API.json(readiness, status: readiness.degraded.isEmpty ? .ok : .serviceUnavailable)
            response.headers[.cacheControl] = "no-store"
            return response
        }
        router.get("openapi.json") { [document] _, _ in
            Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(bytes: document)))
        }
        router.get("metrics") { [scrape, metricsAccess, adminToken] request, context in
            let proxied = MetricsAccess.forwardingHeaders.first { request.headers[HTTPField.Name($0)!] != nil }
            switch metricsAccess.check(
                address: context.remoteAddress, authorization: request.headers[.authorization], adminToken: adminToken,
                forwardedBy: proxied)
            {
            case .none: break
            case .notFound: throw API.error(.notFound, "/metrics is off on this server (http.metrics)")
            case .forbidden(let reason): throw API.error(.forbidden, reason)
            case .unauthorized(let reason): throw API.error(.unauthorized, reason)
            }
            var headers = HTTPFields()
            headers[.contentType] = "text/plain; version=0.0.4"
            return Response(
                status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: try await scrape())))
        }
        router.get("api/config") { [configuration] _, _ in try API.json(configuration()) }
    }
}
