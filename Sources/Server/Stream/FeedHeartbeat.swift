import Foundation
import ServiceLifecycle
import Synchronization

/// Sends the live stream's heartbeat every `interval` until shutdown, when it ends every client's
/// stream (streams never end by themselves): the live feed's and the delayed feeds'.
package struct FeedHeartbeat: Service {
    package var feeds: [LiveFeed]
    package var interval: Duration

    package init(feed: LiveFeed, interval: Duration = .seconds(15)) {
        self.init(feeds: [feed], interval: interval)
    }

    package init(feeds: [LiveFeed], interval: Duration = .seconds(15)) {
        self.feeds = feeds
        self.interval = interval
    }

    package func run() async throws {
        do {
            try await cancelWhenGracefulShutdown {
                while true {
                    try await Task.sleep(for: interval)
                    for feed in feeds { feed.heartbeat() }
                }
            }
        } catch is CancellationError {
            // Shutdown.
        }
        for feed in feeds { feed.finishAll() }
    }
}
