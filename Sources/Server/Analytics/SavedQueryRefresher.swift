import Analytics
import Foundation
import Logging
import ServiceLifecycle

/// Refreshes cached queries (saved queries with a `refresh_rate`) as they fall due: every
/// `interval` it takes the due ones from the store one by one (on PostgreSQL each is taken by one
/// instance: its due time moves on by `lease` as it is taken) and runs them in the analytics
/// queries' turns, keeping each result until its next refresh. A query that fails is tried again
/// after `retry`, its last result kept.
package struct SavedQueryRefresher: Service {
    package let api: AnalyticsAPI
    package var interval: Duration = .seconds(30)
    /// How long a taken query is left to the instance that took it before another may.
    package var lease: Int64 = 600_000_000
    package var retry: Int64 = 300_000_000
    package var logger = Logger(label: "nohit.analytics.refresh")

    package init(api: AnalyticsAPI) {
        self.api = api
    }

    package func run() async throws {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            do {
                _ = try await refreshDue()
                _ = try await refreshDueDatasets()
            } catch {
                logger.warning(
                    "cached queries or datasets could not be read for refreshing", metadata: ["error": "\(error)"])
            }
            try? await gracefulShutdown(for: interval)
        }
    }

    /// Refreshes the cached queries due at the API's clock, one taken at a time (so each is run
    /// well within its lease), at most `limit`; how many were refreshed. A run that fails keeps
    /// the result it had and is tried again after `retry`.
    @discardableResult
    package func refreshDue(limit: Int = 100) async throws -> Int {
        try await drain(limit, "cached query", name: { "\($0.project)/\($0.name)" }) { now in
            try await api.store.claimDueSavedQueries(now: now, lease: lease, limit: 1).first
        } run: { saved in
            _ = try await api.runSaved(saved, context: nil)
        } failed: { saved, _, now in
            try await api.store.postponeSavedQuery(
                project: saved.project, name: saved.name, modifiedAt: saved.modifiedAt, due: now + retry)
        }
    }

    /// Computes the cached datasets due at the API's clock (a new one's whole timeframe, then its
    /// latest buckets), one taken at a time, at most `limit`; how many were computed. A run that
    /// fails leaves the buckets it had and is tried again after five minutes.
    @discardableResult
    package func refreshDueDatasets(limit: Int = 100) async throws -> Int {
        try await drain(limit, "cached dataset", name: { "\($0.project)/\($0.name)" }) { now in
            try await api.store.claimDueDatasets(now: now, lease: lease, limit: 1).first
        } run: { dataset in
            try await api.refreshDataset(dataset, share: "\(dataset.project) datasets")
        } failed: { dataset, error, now in
            try await api.store.failDataset(
                project: dataset.project, name: dataset.name, modifiedAt: dataset.modifiedAt,
                status: dataset.refreshedAt == nil ? "BootstrappingFailed" : "OK",
                error: (error as? KeenError)?.message ?? "\(error)", due: now + AnalyticsAPI.datasetRetry)
        }
    }

    /// Takes what is due one at a time (`claim`) and runs it, at most `limit`; one whose run fails
    /// is logged and handed to `failed`. How many ran.
    private func drain<Item: Sendable>(
        _ limit: Int, _ what: String, name: (Item) -> String, claim: (Int64) async throws -> Item?,
        run: (Item) async throws -> Void,
        failed: (Item, any Error, Int64) async throws -> Void
    ) async throws -> Int {
        var ran = 0
        for _ in 0..<limit {
            let now = api.now()
            guard let item = try await claim(now) else { break }
            do {
                try await run(item)
                ran += 1
            } catch {
                logger.warning(
                    "a \(what) could not be refreshed; it is tried again later",
                    metadata: ["name": "\(name(item))", "error": "\(error)"])
                try? await failed(item, error, now)
            }
        }
        return ran
    }
}

/// Waits `duration`, or less when a graceful shutdown begins.
private func gracefulShutdown(for duration: Duration) async throws {
    try await cancelWhenGracefulShutdown { try await Task.sleep(for: duration) }
}
