import Clocks
import CoreMetrics
import Foundation
import Pipeline
import Prometheus
import Scores
import Storage
import Synchronization

/// The service's metrics, through swift-metrics into one Prometheus registry behind `/metrics`:
/// the dispatchers' counters and latency histograms (made through ``factory``), the HTTP requests
/// (Hummingbird's metrics middleware, through the same factory once the process bootstraps the
/// metrics system with it), and the gauges read from the board, the stream and the outbox at each
/// scrape.
package final class ServerMetrics: Sendable {
    package let registry: PrometheusCollectorRegistry
    package let factory: PrometheusMetricsFactory
    private let liveEvents: Prometheus.Counter
    private let liveEventsCounted = Atomic<Int>(0)
    private let coalesced: Prometheus.Counter
    private let coalescedCounted = Atomic<Int>(0)
    private let streamClients: Prometheus.Gauge
    private let games: [GameSnapshot.Status: Prometheus.Gauge]
    private let attempts: Prometheus.Gauge
    private let outbox: [String: Prometheus.Gauge]
    private let starts: [String: Prometheus.Gauge]
    private let connections: Prometheus.Gauge
    private let clients: Prometheus.Gauge
    private let refused: [String: Prometheus.Gauge]
    private let timedOut: Prometheus.Gauge
    private let malformed: Prometheus.Gauge
    private let idleClosed: Prometheus.Gauge
    private let stalledClosed: Prometheus.Gauge
    private let pacedWaits: Prometheus.Gauge
    private let queries: [String: Prometheus.Gauge]
    private let sourceReady: Prometheus.Gauge
    private let storageWritable: Prometheus.Gauge
    private let storageFailures: Prometheus.Gauge
    private let broadcastChannels: [String: Prometheus.Gauge]
    private let clockStep: Prometheus.Gauge
    private let sourceLastSuccess: Prometheus.Gauge
    private let sourceRequests: [String: Prometheus.Gauge]

    /// The outcomes `nohit_source_requests` counts.
    package static let sourceOutcomes = ["ok", "http", "timeout", "connection", "unreadable"]

    /// The latency buckets of `nohit_alert_latency_seconds`, in seconds.
    package static let latencyBuckets: [Double] = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300]
    /// The buckets of `nohit_play_to_send_seconds`: around the goal of a second and a half from the
    /// play, and a poll's wait (10 s) beyond it.
    package static let playToSendBuckets: [Double] = [0.25, 0.5, 1, 1.5, 2, 3, 5, 10, 15, 30, 60]

    package init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.registry = registry
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.valueHistogramBuckets["nohit_alert_latency_seconds"] = Self.latencyBuckets
        factory.valueHistogramBuckets["nohit_play_to_send_seconds"] = Self.playToSendBuckets
        self.factory = factory
        liveEvents = registry.makeCounter(
            name: "nohit_live_events_total", help: "Events published on the live stream.")
        coalesced = registry.makeCounter(
            name: "nohit_stream_events_coalesced_total",
            help:
                "Game and score events a client that was behind never got: a newer one of the same game superseded them."
        )
        streamClients = registry.makeGauge(name: "nohit_stream_clients", help: "Clients connected to the live stream.")
        stalledClosed = registry.makeGauge(
            name: "nohit_stream_clients_closed_stalled",
            help:
                "Live-stream connections closed since start because they stopped reading (unwritable past the stall timeout)."
        )
        pacedWaits = registry.makeGauge(
            name: "nohit_stream_client_waits_for_event_loop",
            help:
                "Times since start a WebSocket live-stream client waited for its connection's event loop to send its "
                + "queued batches before taking the next one (meanwhile its events were coalesced)."
        )
        var games: [GameSnapshot.Status: Prometheus.Gauge] = [:]
        for status in [GameSnapshot.Status.scheduled, .live, .final] {
            games[status] = registry.makeGauge(
                name: "nohit_games", labels: [("status", status.rawValue)], help: "Today's games by status.")
        }
        self.games = games
        attempts = registry.makeGauge(name: "nohit_attempts", help: "Sides hitless through the attempt threshold.")
        var outbox: [String: Prometheus.Gauge] = [:]
        for state in ["pending", "sending", "delivered", "failed", "superseded", "held"] {
            outbox[state] = registry.makeGauge(
                name: "nohit_outbox", labels: [("state", state)],
                help: "Outbox rows by state (pending and sending are the depth).")
        }
        self.outbox = outbox
        var starts: [String: Prometheus.Gauge] = [:]
        for outcome in ["started", "not-started"] {
            starts[outcome] = registry.makeGauge(
                name: "nohit_push_to_start", labels: [("outcome", outcome)],
                help:
                    "Live Activities started by push (APNs accepted the start), and starts that failed: refused, "
                    + "given up, or dropped when the bid was over before the device's start budget let them go "
                    + "(the failed deliveries list says which).")
        }
        self.starts = starts
        connections = registry.makeGauge(name: "nohit_http_connections", help: "Open HTTP connections.")
        clients = registry.makeGauge(name: "nohit_http_clients", help: "Clients with open HTTP connections.")
        var refused: [String: Prometheus.Gauge] = [:]
        for limit in ["total", "per-client", "barred"] {
            refused[limit] = registry.makeGauge(
                name: "nohit_http_refused_connections", labels: [("limit", limit)],
                help:
                    "Connections refused since start (503), by the limit they hit (barred: a client with repeated "
                    + "protocol errors).")
        }
        self.refused = refused
        timedOut = registry.makeGauge(
            name: "nohit_http_header_timeouts", help: "Connections closed since start for not sending a request head.")
        malformed = registry.makeGauge(
            name: "nohit_http_malformed_requests", help: "Requests answered 400 or 431 since start (unreadable heads).")
        idleClosed = registry.makeGauge(
            name: "nohit_http_idle_connections_closed",
            help: "Idle keep-alive connections closed since start to make room for new ones at the connection cap.")
        var queries: [String: Prometheus.Gauge] = [:]
        for state in ["running", "waiting"] {
            queries[state] = registry.makeGauge(
                name: "nohit_analytics_queries", labels: [("state", state)],
                help: "Keen API queries running now, and waiting for their turn.")
        }
        for reason in ["time-limit", "no-turn"] {
            queries[reason] = registry.makeGauge(
                name: "nohit_analytics_queries_stopped", labels: [("reason", reason)],
                help: "Keen API queries since start stopped at their time limit, or refused a turn (429).")
        }
        self.queries = queries
        storageWritable = registry.makeGauge(
            name: "nohit_storage_writable",
            help: "1 when the database takes writes, 0 while it refuses them for a fault of the machine (a full disk).")
        storageFailures = registry.makeGauge(
            name: "nohit_storage_write_failures",
            help: "Writes the database refused since start for a fault of the machine (a full disk, an I/O error).")
        var broadcastChannels: [String: Prometheus.Gauge] = [:]
        broadcastChannels["open"] = registry.makeGauge(
            name: "nohit_broadcast_channels_open",
            help: "Broadcast channels (iOS 18 Live Activities) the service keeps on APNs now, over every app.")
        for event in ["created", "deleted", "leaked-deleted", "refused-at-limit", "failed"] {
            broadcastChannels[event] = registry.makeGauge(
                name: "nohit_broadcast_channels", labels: [("event", event)],
                help:
                    "Broadcast channels since start: made, deleted after their game, deleted as kept by no device (left "
                    + "by a stop), not made because the app was at APNs' limit, and management requests that failed.")
        }
        self.broadcastChannels = broadcastChannels
        clockStep = registry.makeGauge(
            name: "nohit_clock_step_seconds",
            help:
                "The system's wall clock less the service's steady one: how far the system clock was stepped since "
                + "the start (retries, staleness and replays keep the steady clock; a restart takes the new time).")
        sourceReady = registry.makeGauge(
            name: "nohit_source_ready",
            help:
                "1 when the source of games is current (as /readyz says: the Stats API answered within its expected wait), else 0."
        )
        sourceLastSuccess = registry.makeGauge(
            name: "nohit_source_last_success_timestamp_seconds",
            help: "When the Stats API last answered a request (Unix time; 0 before the first answer or for a replay).")
        var sourceRequests: [String: Prometheus.Gauge] = [:]
        for outcome in Self.sourceOutcomes {
            sourceRequests[outcome] = registry.makeGauge(
                name: "nohit_source_requests", labels: [("outcome", outcome)],
                help:
                    "Stats API requests since start by outcome: ok, http (another status), timeout, connection, "
                    + "unreadable (not the JSON expected).")
        }
        self.sourceRequests = sourceRequests
        registry.makeGauge(
            name: "nohit_build_info", labels: [("version", BuildInfo.version), ("swift", BuildInfo.swift)],
            help: "Always 1: the release running and the Swift compiler that built it."
        ).set(1.0)
    }

    /// The Prometheus text, with the gauges read now.
    package func scrape(
        board: LiveBoard, feeds: DelayedFeeds, outboxStore: (any OutboxStore)?, attemptOuts: Int, gate: ConnectionGate,
        stalls: StreamStallWatch? = nil, pacing: StreamPacing? = nil, analytics: AnalyticsQueries? = nil,
        source: SourceStatus? = nil, storage: StorageHealth? = nil, broadcasts: BroadcastChannels.Counts? = nil
    ) async throws -> [UInt8] {
        if let broadcasts {
            broadcastChannels["open"]?.set(Double(broadcasts.open))
            broadcastChannels["created"]?.set(Double(broadcasts.created))
            broadcastChannels["deleted"]?.set(Double(broadcasts.deleted))
            broadcastChannels["leaked-deleted"]?.set(Double(broadcasts.leaksDeleted))
            broadcastChannels["refused-at-limit"]?.set(Double(broadcasts.refusedAtLimit))
            broadcastChannels["failed"]?.set(Double(broadcasts.failures))
        }
        storageWritable.set(storage?.failing == nil ? 1.0 : 0.0)
        clockStep.set(SteadyWallClock.process.systemOffset)
        storageFailures.set(Double(storage?.failures ?? 0))
        sourceReady.set((source?.ready ?? true) ? 1.0 : 0.0)
        sourceLastSuccess.set(source?.lastSuccess?.timeIntervalSince1970 ?? 0)
        for (outcome, gauge) in sourceRequests { gauge.set(Double(source?.requests[outcome] ?? 0)) }
        if let stalls { stalledClosed.set(Double(stalls.closedCount)) }
        if let pacing { pacedWaits.set(Double(pacing.waitCount)) }
        if let counts = analytics?.counts {
            queries["running"]?.set(Double(counts.running))
            queries["waiting"]?.set(Double(counts.waiting))
            queries["time-limit"]?.set(Double(counts.timedOut))
            queries["no-turn"]?.set(Double(counts.refused))
        }
        let counts = gate.counts
        connections.set(Double(counts.open))
        clients.set(Double(counts.clients))
        refused["total"]?.set(Double(counts.refusedTotal))
        refused["per-client"]?.set(Double(counts.refusedPerClient))
        refused["barred"]?.set(Double(counts.refusedBarred))
        timedOut.set(Double(counts.timedOut))
        malformed.set(Double(counts.malformed))
        idleClosed.set(Double(counts.evictedIdle))
        let feed = feeds.live
        let published = feed.lastID
        let counted = liveEventsCounted.exchange(published, ordering: .relaxed)
        if published > counted { liveEvents.increment(by: Int64(published - counted)) }
        let superseded = feed.coalescedCount
        let supersededCounted = coalescedCounted.exchange(superseded, ordering: .relaxed)
        if superseded > supersededCounted { coalesced.increment(by: Int64(superseded - supersededCounted)) }
        // Every client, live or held back by a spoiler delay.
        streamClients.set(Double(feeds.clientCount))
        let all = board.all
        for (status, gauge) in games { gauge.set(Double(all.filter { $0.status == status }.count)) }
        attempts.set(Double(all.reduce(0) { $0 + $1.attempts(minimumOuts: attemptOuts).count }))
        if let counts = try await outboxStore?.outboxCounts() {
            outbox["pending"]?.set(Double(counts.pending))
            outbox["sending"]?.set(Double(counts.sending))
            outbox["delivered"]?.set(Double(counts.delivered))
            outbox["failed"]?.set(Double(counts.failed))
            outbox["superseded"]?.set(Double(counts.superseded))
            outbox["held"]?.set(Double(counts.held))
            starts["started"]?.set(Double(counts.startsSent))
            starts["not-started"]?.set(Double(counts.startsFailed))
        }
        return registry.emitToBuffer() + Self.gameLines(source?.games ?? [:])
    }

    /// Each followed game's feed requests, as Prometheus text: series that come and go with the
    /// games (a game is dropped an hour after its last request), so written here rather than
    /// kept in the registry.
    /// Each family is named (HELP, TYPE) even with no game followed (a replay, a quiet night).
    static func gameLines(_ games: [Int: SourceStatus.Game]) -> [UInt8] {
        let sorted = games.sorted { $0.key < $1.key }
        func labels(_ pk: Int, _ game: SourceStatus.Game) -> String {
            // Game ids are letters and digits; anything else is left out rather than escaped.
            let id = (game.gameID ?? "").filter { $0.isASCII && ($0.isLetter || $0.isNumber) }
            return "game_pk=\"\(pk)\",game=\"\(id)\""
        }
        func number(_ value: Double) -> String {
            value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
        }
        var text = ""
        let families: [(String, String, String, (SourceStatus.Game) -> Double?)] = [
            (
                "nohit_source_game_requests", "gauge",
                "Feed requests for each game followed since start that were answered with its feed.",
                { Double($0.answered) }
            ),
            (
                "nohit_source_game_failures", "gauge",
                "Feed requests for each game followed since start that failed or were not answered with its feed.",
                { Double($0.failed) }
            ),
            (
                "nohit_source_game_last_success_timestamp_seconds", "gauge",
                "When each game's feed was last read (Unix time).",
                { $0.lastSuccess?.timeIntervalSince1970 }
            ),
            (
                "nohit_source_game_feed_timestamp_seconds", "gauge",
                "Each game's feed: the feed's own time of its latest change (metaData.timeStamp, Unix time); "
                    + "time() minus it is how far behind the game the server is.",
                { $0.feedTime?.timeIntervalSince1970 }
            ),
            (
                "nohit_source_game_feed_lag_seconds", "gauge",
                "Each game's feed: seconds from its latest change (by the feed's own clock) to this server reading it.",
                { $0.feedLag }
            ),
        ]
        for (name, type, help, value) in families {
            let series = sorted.compactMap { pk, game in
                value(game).map { "\(name){\(labels(pk, game))} \(number($0))\n" }
            }
            text += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n" + series.joined()
        }
        return Array(text.utf8)
    }
}
