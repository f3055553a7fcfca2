import Analytics
import Foundation
import Logging
import ServiceLifecycle
import Storage

/// Refreshes cached queries (saved queries with a `refresh_rate`) as they fall due: every
/// `interval` it takes the due ones from the store (on PostgreSQL each is taken by one instance:
/// its due time moves on as it is taken) and runs them in the analytics queries' turns, keeping
/// each result until its next refresh. A query that fails is tried again after `retry`.
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

    /// Refreshes the cached queries due at the API's clock; how many were refreshed.
    @discardableResult
    package func refreshDue(limit: Int = 20) async throws -> Int {
        let now = api.now()
        var refreshed = 0
        for saved in try await api.store.claimDueSavedQueries(now: now, lease: lease, limit: limit) {
            do {
                _ = try await api.runSaved(saved, context: nil)
                refreshed += 1
            } catch {
                logger.warning(
                    "a cached query could not be refreshed",
                    metadata: ["project": "\(saved.project)", "query": "\(saved.name)", "error": "\(error)"])
                try? await api.store.cacheSavedQueryResult(
                    project: saved.project, name: saved.name, modifiedAt: saved.modifiedAt,
                    result: saved.result ?? JSONObject(), at: saved.resultAt ?? now, due: now + retry)
            }
        }
        return refreshed
    }
}

/// Waits `duration`, or less when a graceful shutdown begins.
private func gracefulShutdown(for duration: Duration) async throws {
    try await cancelWhenGracefulShutdown { try await Task.sleep(for: duration) }
}
