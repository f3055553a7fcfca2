import Foundation
import Synchronization

/// So many actions per client per minute, as token buckets (a burst of `burst`, then one every
/// `60 / perMinute` seconds): what keeps one anonymous client from registering devices by the
/// thousand. Buckets of clients not heard from for ten minutes are forgotten; at most `clients`
/// buckets are kept (the oldest forgotten first), so the limiter's memory is bounded too.
package final class RateLimiter: Sendable {
    package let perMinute: Double
    package let burst: Double
    private let clients: Int

    private struct Bucket {
        var tokens: Double
        var updated: Date
    }

    private let buckets = Mutex<[String: Bucket]>([:])

    /// `perMinute` 0 lets everything through.
    package init(perMinute: Int, burst: Int, clients: Int = 100_000) {
        self.perMinute = Double(perMinute)
        self.burst = Double(max(1, burst))
        self.clients = clients
    }

    /// Takes one token for `client` at `now`: nil if it may go ahead, else the seconds until it may.
    package func take(_ client: String, now: Date) -> TimeInterval? {
        guard perMinute > 0 else { return nil }
        return buckets.withLock { buckets in
            if buckets.count >= clients {
                let stale = now.addingTimeInterval(-600)
                buckets = buckets.filter { $0.value.updated > stale }
                if buckets.count >= clients, let oldest = buckets.min(by: { $0.value.updated < $1.value.updated }) {
                    buckets[oldest.key] = nil
                }
            }
            var bucket = buckets[client] ?? Bucket(tokens: burst, updated: now)
            let refill = max(0, now.timeIntervalSince(bucket.updated)) * perMinute / 60
            bucket.tokens = min(burst, bucket.tokens + refill)
            bucket.updated = now
            defer { buckets[client] = bucket }
            guard bucket.tokens >= 1 else { return (1 - bucket.tokens) * 60 / perMinute }
            bucket.tokens -= 1
            return nil
        }
    }
}
