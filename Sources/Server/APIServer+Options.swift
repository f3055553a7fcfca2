import Alerts
import Delivery
import Foundation
import Pipeline
import Storage

extension APIServer {
    /// What a server may have beyond its store, board, feed, seasons and clock.
    package struct Options: Sendable {
        /// Device registrations per client per minute (bursts of twice that).
        package static let defaultRegistrationsPerMinute = 10
        /// Minutes a finished game of the day before stays on the default scoreboard.
        package static let defaultKeepFinishedMinutes = 180
        /// The web app's files, as they ship.
        package static var bundledPublicFolder: String? {
            Bundle.module.resourceURL?.appendingPathComponent("Public").path
        }

        package var registrar: Registrar
        /// Origins of the declared apps' web pages served elsewhere: they may call the device
        /// endpoints and `/api/config` across origins (CORS); no other origin may.
        package var webOrigins: Set<String>
        /// Outs a side must be hitless through to count as a current attempt (12: four innings).
        package var attemptOuts: Int
        /// The VAPID public key browsers subscribe with (base64url), when Web Push is configured.
        package var vapidPublicKey: String?
        /// The operator's token for `/api/admin/...`; without one those endpoints are closed.
        package var adminToken: String?
        /// The registry behind /metrics (the dispatchers feed it through its factory).
        package var metrics: ServerMetrics
        /// Who may read /metrics.
        package var metricsAccess: MetricsAccess
        /// The outbox, for its depth in /metrics and the operator's counts.
        package var outbox: (any OutboxStore)?
        /// The web UI's files; nil serves the API alone.
        package var publicFolder: String?
        /// Who may connect and how much they may ask (connections, timeouts, head sizes, streams).
        package var gate: ConnectionGate
        /// Live-stream clients whose writes stopped going out, closed after its timeout (swept by
        /// ``StreamStallSweep``).
        package var stalls: StreamStallWatch
        /// Keeps each live-stream client to a few batches queued on its connection's event loop.
        package var pacing: StreamPacing
        /// Registrations per client.
        package var registrations: RateLimiter
        /// How long a finished game of the day before stays on the default scoreboard (its late
        /// games still under way stay until they end).
        package var keepFinished: TimeInterval
        /// Where live games come from (`replay` or `statsapi`), for the page's data notice.
        package var source: String
        /// How the source is doing, for `/readyz` and the metrics (nil: a replay, always current).
        package var sourceStatus: (@Sendable () -> SourceStatus)?
        /// The providers refusing this server's configuration, for `/readyz`.
        package var deliveryFaults: DeliveryFaults?
        /// Whether the database takes writes (`/readyz`, the metrics; a write a request could not
        /// store is refused with 503 and noted here).
        package var storage: StorageHealth
        /// The deals: today's answers and histories (none: the deal endpoints answer 404).
        package var deals: DealDesk?
        /// Keen's API under `/3.0/projects/...` (the store's analytics).
        package var analytics: AnalyticsAPI?
        /// The web app's own analytics project and its write key (public: the page sends its
        /// views and taps with it), told to the page by `/api/config`.
        package var webAnalytics: ClientConfiguration.Analytics?
        /// Sends one test push to a device through the configured provider
        /// (`POST /api/admin/devices/{id}/test`); nil when no provider is configured.
        package var testPush: (@Sendable (Device) async -> TestPushAnswer)?
        /// The broadcast channel kept for a game, app, environment and delay; nil when the service
        /// keeps none (no APNs key).
        package var broadcastChannel: (@Sendable (BroadcastChannelPlan.Key) async throws -> String?)?
        /// What the broadcast channels did, for the metrics.
        package var broadcastCounts: (@Sendable () -> BroadcastChannels.Counts)?

        /// Each option; every one has a default for tests of the API alone.
        package init(
            registrar: Registrar = Registrar(),
            webOrigins: Set<String> = [],
            attemptOuts: Int = 12,
            vapidPublicKey: String? = nil,
            adminToken: String? = nil,
            metrics: ServerMetrics = ServerMetrics(),
            metricsAccess: MetricsAccess = .standard,
            outbox: (any OutboxStore)? = nil,
            publicFolder: String? = Options.bundledPublicFolder,
            gate: ConnectionGate = ConnectionGate(limits: ConnectionLimits()),
            stalls: StreamStallWatch = StreamStallWatch(),
            pacing: StreamPacing = StreamPacing(),
            registrations: RateLimiter = RateLimiter(
                perMinute: Options.defaultRegistrationsPerMinute, burst: 2 * Options.defaultRegistrationsPerMinute),
            keepFinished: TimeInterval = TimeInterval(Options.defaultKeepFinishedMinutes * 60),
            source: String = "replay",
            sourceStatus: (@Sendable () -> SourceStatus)? = nil,
            deliveryFaults: DeliveryFaults? = nil,
            storage: StorageHealth = StorageHealth(),
            deals: DealDesk? = nil,
            analytics: AnalyticsAPI? = nil,
            webAnalytics: ClientConfiguration.Analytics? = nil,
            testPush: (@Sendable (Device) async -> TestPushAnswer)? = nil
        ) {
            self.registrar = registrar
            self.webOrigins = webOrigins
            self.attemptOuts = attemptOuts
            self.vapidPublicKey = vapidPublicKey
            self.adminToken = adminToken
            self.metrics = metrics
            self.metricsAccess = metricsAccess
            self.outbox = outbox
            self.publicFolder = publicFolder
            self.gate = gate
            self.stalls = stalls
            self.pacing = pacing
            self.registrations = registrations
            self.keepFinished = keepFinished
            self.source = source
            self.sourceStatus = sourceStatus
            self.deliveryFaults = deliveryFaults
            self.storage = storage
            self.deals = deals
            self.analytics = analytics
            self.webAnalytics = webAnalytics
            self.testPush = testPush
        }
    }
}
