import Foundation
import ServiceLifecycle
import Synchronization

/// Sends the live stream's heartbeat every `interval` until shutdown, when it ends every client's
/// stream (streams never end by themselves).
package struct FeedHeartbeat: Service {
    package var feed: LiveFeed
    package var interval: Duration

    package init(feed: LiveFeed, interval: Duration = .seconds(15)) {
        self.feed = feed
        self.interval = interval
    }

    package func run() async throws {
        do {
            try await cancelWhenGracefulShutdown {
                while true {
                    try await Task.sleep(for: interval)
                    feed.heartbeat()
                }
            }
        } catch is CancellationError {
            // Shutdown.
        }
        feed.finishAll()
    }
}
