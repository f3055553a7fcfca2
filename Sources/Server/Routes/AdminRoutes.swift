import Alerts
import Analytics
import Clocks
import Delivery
import Foundation
import Hummingbird
import Storage

/// The operator's endpoints, behind `Authorization: Bearer <admin token>`: the outbox's counts,
/// the deliveries that failed, the devices' counts, the web app's usage, disabling a device and
/// sending it a test push.
struct AdminRoutes: Sendable {
    /// Without one, these endpoints are closed (403).
    let adminToken: String?
    let store: any DeviceStore
    /// Absent in tests of the API alone.
    let outbox: (any OutboxStore)?
    let analytics: AnalyticsAPI?
    /// The project `admin/metrics` reads when none is asked for: the web app's.
    let webProject: String?
    let testPush: (@Sendable (Device) async -> TestPushAnswer)?
    let clock: any WallClock

    func add(to api: RouterGroup<APIRequestContext>) {
        api.get("admin/outbox") { request, _ in
            try admin(request)
            guard let outbox else { throw API.error(.notFound, "this server has no outbox") }
            let counts = try await outbox.outboxCounts()
            return try API.json([
                "pending": counts.pending, "sending": counts.sending, "delivered": counts.delivered,
                "failed": counts.failed, "superseded": counts.superseded, "held": counts.held,
            ])
        }
        api.get("admin/deliveries/failed") { request, _ in
            try admin(request)
            guard let outbox else { throw API.error(.notFound, "this server has no outbox") }
            let limit = try API.limit(request, default: 50)
            let failed = try await outbox.failedDeliveries(limit: limit)
            return try API.json(AdminFailedDeliveries(failed, total: try await outbox.outboxCounts().failed))
        }
        api.get("admin/devices") { request, _ in
            try admin(request)
            let active = try await store.activeDevices()
            var byChannel: [String: Int] = [:]
            for device in active { byChannel[device.channel.kind.rawValue, default: 0] += 1 }
            return try API.json(
                AdminDeviceCounts(
                    total: try await store.deviceCount(), active: active.count, activeByChannel: byChannel))
        }
        api.get("admin/projects") { request, _ in
            try admin(request)
            guard let analytics else { throw API.error(.notFound, "this server keeps no analytics") }
            let projects = try await analytics.store.analyticsProjects().map {
                AdminProjects.Project(id: $0.id, name: $0.name)
            }
            return try API.json(AdminProjects(projects: projects, default: webProject))
        }
        api.get("admin/metrics") { request, _ in
            try admin(request)
            guard let analytics else { throw API.error(.notFound, "this server keeps no analytics") }
            let parameters = request.uri.queryParameters
            guard let project = parameters.get("project") ?? webProject else {
                throw API.error(.badRequest, "project: which analytics project (nohit analytics project list)")
            }
            let days =
                try parameters.get("days").map { text in
                    guard let days = Int(text) else { throw API.error(.badRequest, "days: '\(text)' is not a number") }
                    return days
                } ?? 14
            do {
                let usage = try await analytics.usage(
                    project: project, days: days, timezone: parameters.get("timezone") ?? "UTC",
                    compare: parameters.get("compare"))
                return AnalyticsAPI.response(.ok, body: usage)
            } catch let error as KeenError {
                // A busy or stopping server is not the operator's mistake: 503, with when to ask again.
                switch error.status {
                case 404: throw API.error(.notFound, error.message)
                case 429, 503, 504:
                    throw API.error(.serviceUnavailable, "the analytics queries are busy: \(error.message)")
                default: throw API.error(.badRequest, error.message)
                }
            }
        }
        api.post("admin/devices/:id/disable") { request, context in
            try admin(request)
            let text = try context.parameters.require("id")
            guard let id = UUID(uuidString: text) else { throw API.error(.badRequest, "'\(text)' is not a device id") }
            guard try await store.disable(id: id, reason: "disabled by the operator", at: clock.now()) else {
                throw API.error(.notFound, "no device \(id)")
            }
            return try API.json(["id": id.uuidString, "status": "disabled"])
        }
        api.post("admin/devices/:id/test") { request, context in
            try admin(request)
            let text = try context.parameters.require("id")
            guard let id = UUID(uuidString: text) else { throw API.error(.badRequest, "'\(text)' is not a device id") }
            guard let testPush else {
                throw API.error(.notFound, "this server has no push provider configured: nothing to test")
            }
            guard let device = try await store.device(id: id) else { throw API.error(.notFound, "no device \(id)") }
            return try API.json(await testPush(device))
        }
    }

    /// Lets the request through when it carries the operator's token.
    func admin(_ request: Request) throws {
        guard let adminToken, !adminToken.isEmpty else {
            throw API.error(.forbidden, "operator endpoints are off: the server was started without an admin token")
        }
        guard let authorization = request.headers[.authorization], authorization.hasPrefix("Bearer ") else {
            throw API.error(.unauthorized, "the admin token is required (Authorization: Bearer <token>)")
        }
        // Their SHA-256 digests compared in constant time: neither the token's length nor where
        // a guess first differs shows in the time taken.
        guard Registrar.constantTimeEqual(String(authorization.dropFirst(7)), adminToken) else {
            throw API.error(.unauthorized, "wrong admin token")
        }
    }
}
