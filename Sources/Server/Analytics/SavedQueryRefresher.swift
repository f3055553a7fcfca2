import Analytics
import Foundation
import Logging
import ServiceLifecycle
import Storage

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
            } catch {
                logger.warning("cached queries could not be read for refreshing", metadata: ["error": "\(error)"])
            }
            try? await gracefulShutdown(for: interval)
        }
    }

    /// Refreshes the cached queries due at the API's clock, one taken at a time (so each is run
    /// well within its lease), at most `limit`; how many were refreshed.
    @discardableResult
    package func refreshDue(limit: Int = 100) async throws -> Int {
        var refreshed = 0
        for _ in 0..<limit {
            let now = api.now()
            guard let saved = try await api.store.claimDueSavedQueries(now: now, lease: lease, limit: 1).first else {
                break
            }
            do {
                _ = try await api.runSaved(saved, context: nil)
                refreshed += 1
            } catch {
                logger.warning(
                    "a cached query could not be refreshed; it is tried again later",
                    metadata: ["project": "\(saved.project)", "query": "\(saved.name)", "error": "\(error)"])
                // Its kept result (if any) stays; it is due again after `retry`.
                try? await api.store.postponeSavedQuery(
                    project: saved.project, name: saved.name, modifiedAt: saved.modifiedAt, due: now + retry)
            }
        }
        return refreshed
    }
}

/// Waits `duration`, or less when a graceful shutdown begins.
private func gracefulShutdown(for duration: Duration) async throws {
    try await cancelWhenGracefulShutdown { try await Task.sleep(for: duration) }
}
