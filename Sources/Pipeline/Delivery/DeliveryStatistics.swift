import Alerts
import Baseball
import CoreMetrics
import Foundation
import Histogram
import Synchronization

/// What the dispatchers have done, for reports, metrics and benchmarks: per channel, the outcomes
/// counted, and the latency from the moment to the provider's acknowledgement in a bounded
/// histogram (HdrHistogram: exact percentiles to three significant digits, the same memory
/// however long the service runs). Each outcome and latency also goes to swift-metrics
/// (`nohit_deliveries_total{channel,outcome}`, `nohit_provider_token_refreshes_total{channel}`,
/// `nohit_alert_latency_seconds{channel}`, and `nohit_play_to_send_seconds{channel}` from the
/// source's own time of the play, where `playTimes` knows it) through the factory given, if any.
package final class DeliveryStatistics: Sendable {
    /// One channel's outcomes since start.
    package struct Counts: Sendable {
        package var delivered = 0
        package var retried = 0
        package var failed = 0
        package var pruned = 0
        package var held = 0
        package var tokenRefreshes = 0
        /// Latencies in microseconds, up to an hour.
        package var latency = Histogram<UInt64>(
            highestTrackableValue: 3_600_000_000, numberOfSignificantValueDigits: .three)

        /// From the source's own time of the play to the provider's acknowledgement, in
        /// microseconds, for the deliveries whose play time is known (`PlayTimes`).
        package var playToSend = Histogram<UInt64>(
            highestTrackableValue: 3_600_000_000, numberOfSignificantValueDigits: .three)

        /// The latency at `percentile` (0-100), in seconds.
        package func latency(at percentile: Double) -> Double {
            Double(latency.valueAtPercentile(percentile)) / 1e6
        }
    }

    package struct Snapshot: Sendable {
        package var byChannel: [ChannelKind: Counts] = [:]

        package var delivered: Int { byChannel.values.reduce(0) { $0 + $1.delivered } }
        package var retried: Int { byChannel.values.reduce(0) { $0 + $1.retried } }
        package var failed: Int { byChannel.values.reduce(0) { $0 + $1.failed } }
        package var pruned: Int { byChannel.values.reduce(0) { $0 + $1.pruned } }
        package var held: Int { byChannel.values.reduce(0) { $0 + $1.held } }
        package var tokenRefreshes: Int { byChannel.values.reduce(0) { $0 + $1.tokenRefreshes } }

        /// Every channel's latencies together.
        package var latency: Histogram<UInt64> {
            var all = Counts().latency
            for counts in byChannel.values { all.add(counts.latency) }
            return all
        }
    }

    /// The swift-metrics objects of one channel.
    private struct Meters: Sendable {
        var delivered, retried, failed, pruned, held, refreshes: Counter
        var latency, playToSend: Recorder

        init(_ channel: ChannelKind, factory: any MetricsFactory) {
            func outcome(_ name: String) -> Counter {
                Counter(
                    label: "nohit_deliveries_total", dimensions: [("channel", channel.rawValue), ("outcome", name)],
                    factory: factory)
            }
            delivered = outcome("delivered")
            retried = outcome("retried")
            failed = outcome("failed")
            pruned = outcome("pruned")
            held = outcome("held")
            refreshes = Counter(
                label: "nohit_provider_token_refreshes_total", dimensions: [("channel", channel.rawValue)],
                factory: factory)
            latency = Recorder(
                label: "nohit_alert_latency_seconds", dimensions: [("channel", channel.rawValue)], aggregate: true,
                factory: factory)
            playToSend = Recorder(
                label: "nohit_play_to_send_seconds", dimensions: [("channel", channel.rawValue)], aggregate: true,
                factory: factory)
        }
    }

    private let state = Mutex(Snapshot())
    /// The plays' times, by the rows published from them: the source and the publisher note them.
    package let playTimes = PlayTimes()
    private let meters: Mutex<[ChannelKind: Meters]>
    private let factory: (any MetricsFactory)?
    /// The providers refusing this server's configuration.
    package let faults = DeliveryFaults()

    /// `metrics` receives every outcome and latency too (the server's Prometheus registry).
    package init(metrics: (any MetricsFactory)? = nil) {
        factory = metrics
        meters = Mutex([:])
    }

    package var snapshot: Snapshot { state.withLock { $0 } }

    private func meter(_ channel: ChannelKind) -> Meters? {
        guard let factory else { return nil }
        return meters.withLock { meters in
            if let known = meters[channel] { return known }
            let made = Meters(channel, factory: factory)
            meters[channel] = made
            return made
        }
    }

    /// The kinds of outcome counted.
    package enum Outcome: Sendable {
        case delivered, retried, failed, pruned, held, tokenRefresh
    }

    /// A delivery the provider refused, by its reason: `nohit_delivery_failures_total{channel,reason}`
    /// (configuration refusals by Apple's reason, the rest as `failed` or `pruned`).
    func recordFailure(_ channel: ChannelKind, reason: String) {
        guard let factory else { return }
        Counter(
            label: "nohit_delivery_failures_total", dimensions: [("channel", channel.rawValue), ("reason", reason)],
            factory: factory
        ).increment()
    }

    func record(_ channel: ChannelKind, _ outcome: Outcome) {
        state.withLock { state in
            var counts = state.byChannel[channel] ?? Counts()
            switch outcome {
            case .delivered: counts.delivered += 1
            case .retried: counts.retried += 1
            case .failed: counts.failed += 1
            case .pruned: counts.pruned += 1
            case .held: counts.held += 1
            case .tokenRefresh: counts.tokenRefreshes += 1
            }
            state.byChannel[channel] = counts
        }
        guard let meters = meter(channel) else { return }
        switch outcome {
        case .delivered: meters.delivered.increment()
        case .retried: meters.retried.increment()
        case .failed: meters.failed.increment()
        case .pruned: meters.pruned.increment()
        case .held: meters.held.increment()
        case .tokenRefresh: meters.refreshes.increment()
        }
    }

    func recordLatency(_ channel: ChannelKind, _ seconds: Double) {
        record(seconds, channel, in: \.latency, meter: \.latency)
    }

    /// A latency in one of a channel's histograms (up to an hour) and its swift-metrics recorder.
    private func record(
        _ seconds: Double, _ channel: ChannelKind, in histogram: WritableKeyPath<Counts, Histogram<UInt64>>,
        meter recorder: KeyPath<Meters, Recorder>
    ) {
        let microseconds = UInt64(max(0, min(seconds, 3600)) * 1e6)
        state.withLock { state in
            _ = state.byChannel[channel, default: Counts()][keyPath: histogram].record(microseconds)
        }
        meter(channel)?[keyPath: recorder].record(seconds)
    }

    /// A delivery acknowledged at `now`: from its play's time, when this instance knows it and it
    /// is on this server's clock (a replayed day's plays carry that day's times: not measured).
    func recordPlayToSend(_ channel: ChannelKind, bidKey: String, createdAt: Date, now: Date) {
        guard let played = playTimes.playTime(bidKey: bidKey, at: createdAt) else { return }
        let seconds = now.timeIntervalSince(played)
        guard (-60...3600).contains(seconds) else { return }
        record(max(0, seconds), channel, in: \.playToSend, meter: \.playToSend)
    }

    package func reset() {
        state.withLock { $0 = Snapshot() }
    }
}
