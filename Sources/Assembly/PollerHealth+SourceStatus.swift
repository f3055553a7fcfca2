import Foundation
import Server
import StatsAPI

extension PollerHealth {
    /// What `/readyz` and the metrics say of the Stats API poller at `now`. A game is dropped an
    /// hour after its last request, even when no request follows.
    func sourceStatus(now: Date) -> SourceStatus {
        let snapshot = self.snapshot
        let (ready, reason) = snapshot.readiness(now: now)
        var status = SourceStatus(kind: "statsapi", ready: ready, reason: reason)
        status.lastSuccess = snapshot.lastSuccess
        status.expectedWait = snapshot.plannedWait
        status.requests = snapshot.requests
        status.games = snapshot.games.filter { now.timeIntervalSince($0.value.lastRequest) < PollerHealth.keepGame }
            .mapValues {
                SourceStatus.Game(
                    gameID: $0.gameID, lastSuccess: $0.lastSuccess, answered: $0.answered, failed: $0.failed,
                    feedTime: $0.feedTime, feedLag: $0.feedLag)
            }
        return status
    }
}
