import Alerts
import Baseball
import Clocks
import Delivery
import Foundation
import Hummingbird
import Storage

/// Devices and their preferences: registration (rate-limited per client), a device's preferences
/// and its private widget feed, each behind the device's secret.
struct DeviceRoutes: Sendable {
    let store: any DeviceStore & SubscriptionStore
    let registrar: Registrar
    /// Registrations per client.
    let registrations: RateLimiter
    let widget: WidgetFeed
    /// The server's deal rules, which preferences may name.
    let dealRules: [String]?
    let clock: any WallClock

    func add(to api: RouterGroup<APIRequestContext>) {
        api.post("devices") { request, context in
            let client = context.client
            if let wait = registrations.take(client, now: registrations.now()) {
                throw HTTPError(
                    .tooManyRequests, headers: [.retryAfter: "\(Int(wait.rounded(.up)))"],
                    message: "too many registrations from this client; try again in \(Int(wait.rounded(.up))) s")
            }
            let body = try await API.body(request, context: context, keys: .deviceRegistration)
            let registration: DeviceRegistrationBody
            do {
                registration = try API.decoder.decode(DeviceRegistrationBody.self, from: body)
            } catch {
                throw API.error(.badRequest, "the body is not a device registration: \(API.describe(error))")
            }
            let done: Registration
            do {
                done = try registrar.register(try registration.request(apps: registrar.apps), at: clock.now())
            } catch let error as RegistrationError where error.refusedByPolicy {
                throw API.error(.forbidden, "\(error)")
            } catch {
                throw API.error(.badRequest, "\(error)")
            }
            // The same token or subscription registered again (the app reinstalled, its id lost)
            // replaces the device holding it, so the phone gets each alert once.
            try await store.register(done.device)
            var answer = ["id": done.device.id.uuidString, "secret": done.secret]
            // What was stored for an APNs device: the topic and environment (given, or its app's).
            if let apns = done.device.channel.apnsApp {
                answer["topic"] = apns.topic
                answer["environment"] = apns.environment.rawValue
                if let app = registration.app { answer["app"] = app }
            }
            if case .liveActivityStart(_, _, _, let updates) = done.device.channel {
                answer["updates"] = updates.rawValue
            }
            if case .liveActivity(_, _, _, let bid?) = done.device.channel {
                answer["game_id"] = bid.gameID
                answer["pitching_team"] = bid.pitchingTeam
            }
            return try API.json(answer, status: .created)
        }
        api.get("devices/:id/preferences") { request, context in
            let device = try await authorized(request, context: context)
            return try API.json(PreferencesBody(device.preferences))
        }
        api.put("devices/:id/preferences") { request, context in
            let device = try await authorized(request, context: context)
            let body = try await API.body(request, context: context, keys: .preferences)
            let changes: PreferencesBody
            do {
                changes = try API.decoder.decode(PreferencesBody.self, from: body)
            } catch {
                throw API.error(.badRequest, "the body is not valid preferences: \(API.describe(error))")
            }
            let preferences: Preferences
            do {
                preferences = try changes.applied(to: device.preferences)
            } catch {
                throw API.error(.badRequest, "invalid preferences: \(error)")
            }
            if let dealRules, let unknown = preferences.deals.first(where: { !dealRules.contains($0) }) {
                throw API.error(
                    .badRequest,
                    "invalid preferences: deals: '\(unknown)' is not a deal of this server (GET /api/deals/today lists them)"
                )
            }
            guard try await store.updatePreferences(deviceID: device.id, to: preferences) else {
                throw API.error(.notFound, "no device \(device.id)")
            }
            return try API.json(PreferencesBody(preferences))
        }
        api.get("devices/:id/widget") { request, context in
            let device = try await authorized(request, context: context)
            // The device's favourite teams (every game when it has none).
            let teams = device.preferences.favouriteTeams.compactMap {
                TeamDirectory.current($0.uppercased())?.franchise
            }
            // Held back by the device's spoiler delay, as its pushes are (or `?delay=`).
            let delay: Int
            do {
                delay =
                    try WidgetFeed.delay(request.uri.queryParameters.get("delay"))
                    ?? device.preferences.spoilerDelaySeconds
            } catch {
                throw API.error(.badRequest, "\(error)")
            }
            return GameRoutes.widget(
                widget.response(teams: Array(Set(teams)).sorted(), delay: delay, now: clock.now(), isPrivate: true),
                request: request)
        }
    }

    /// What an unknown device's hash is compared with: a hash no secret has (not hex), of a real
    /// hash's length.
    static let unknownDeviceHash = String(repeating: "-", count: 64)

    /// The device named in the path, when the request carries its secret (`Authorization: Bearer`).
    func authorized(_ request: Request, context: APIRequestContext) async throws -> Device {
        let text = try context.parameters.require("id")
        guard let id = UUID(uuidString: text) else { throw API.error(.badRequest, "'\(text)' is not a device id") }
        guard let authorization = request.headers[.authorization], authorization.hasPrefix("Bearer ") else {
            throw API.error(.unauthorized, "the device's secret is required (Authorization: Bearer <secret>)")
        }
        // One answer, after the same work, for an unknown device and a wrong secret: which device
        // ids exist is not told to someone without their secrets. Only the hash is read (one
        // indexed row, nothing decrypted), and an unknown id is compared against a hash of the
        // same length; the device itself is read once the secret is right.
        let hash = try await store.secretHash(deviceID: id)
        let matches = Registrar.constantTimeEqual(
            Registrar.hash(secret: String(authorization.dropFirst(7))), hash ?? Self.unknownDeviceHash)
        guard hash != nil, matches, let device = try await store.device(id: id) else {
            throw API.error(.unauthorized, "no device \(id) with this secret")
        }
        return device
    }
}
