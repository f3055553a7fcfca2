import Clocks
import Foundation
import Synchronization

/// So many actions per client per minute, as token buckets (a burst of `burst`, then one every
/// `60 / perMinute` seconds): what keeps one anonymous client from registering devices by the
/// thousand. Buckets of clients not heard from for ten minutes are forgotten; at most `clients`
/// buckets are kept (the oldest forgotten first), so the limiter's memory is bounded too.
///
/// Times come from a steady clock (``SteadyWallClock``); one that is stepped back anyway (a test's,
/// or a wall clock) takes a bucket's time back with it, so a client is never held for the length
/// of the step.
package final class RateLimiter: Sendable {
    package let perMinute: Double
    package let burst: Double
    private let clients: Int
    /// The limiter's time: the process's steady clock, or a test's.
    package let now: @Sendable () -> Date

    private struct Bucket {
        var tokens: Double
        var updated: Date
    }

    private let buckets = Mutex<[String: Bucket]>([:])

    /// The seconds until `client` has a token, nil if it has one now (none is taken): a request
    /// whose cost is known only after its body is read is refused before reading it otherwise.
    package func waitForRoom(_ client: String, now: Date) -> TimeInterval? {
        guard perMinute > 0 else { return nil }
        return buckets.withLock { buckets in
            guard let bucket = buckets[client] else { return nil }
            let tokens = bucket.tokens + max(0, now.timeIntervalSince(bucket.updated)) * perMinute / 60
            return tokens >= 1 ? nil : (1 - tokens) * 60 / perMinute
        }
    }

    /// `perMinute` 0 lets everything through.
    package init(
        perMinute: Int, burst: Int, clients: Int = 100_000,
        now: @escaping @Sendable () -> Date = { SteadyWallClock.process.now() }
    ) {
        self.perMinute = Double(perMinute)
        self.burst = Double(max(1, burst))
        self.clients = clients
        self.now = now
    }

    /// Takes `cost` tokens from `client` whatever it has (work done for a request refused anyway,
    /// as a batch past its limit): its bucket may owe up to a minute's tokens.
    package func charge(_ client: String, cost: Double, now: Date) {
        guard perMinute > 0 else { return }
        buckets.withLock { buckets in
            var bucket = refilled(client, now: now, in: &buckets)
            bucket.tokens = max(-perMinute, bucket.tokens - cost)
            buckets[client] = bucket
        }
    }

    /// Takes `cost` tokens (one action, or a batch's events) for `client` at `now`: nil if it may go
    /// ahead, else the seconds until it may. A cost above the burst goes ahead on a full bucket and
    /// leaves it owing (a batch larger than a burst is not refused for ever).
    package func take(_ client: String, cost: Double = 1, now: Date) -> TimeInterval? {
        guard perMinute > 0 else { return nil }
        return buckets.withLock { buckets in
            var bucket = refilled(client, now: now, in: &buckets)
            defer { buckets[client] = bucket }
            let needed = min(cost, burst)
            guard bucket.tokens >= needed else { return (needed - bucket.tokens) * 60 / perMinute }
            bucket.tokens -= cost
            return nil
        }
    }

    /// `client`'s bucket refilled up to `now` (a new one full), with room made for it: at most
    /// `clients` buckets are kept, those not heard from for ten minutes forgotten first.
    private func refilled(_ client: String, now: Date, in buckets: inout [String: Bucket]) -> Bucket {
        if buckets.count >= clients {
            let stale = now.addingTimeInterval(-600)
            buckets = buckets.filter { $0.value.updated > stale }
            if buckets.count >= clients, let oldest = buckets.min(by: { $0.value.updated < $1.value.updated }) {
                buckets[oldest.key] = nil
            }
        }
        guard var bucket = buckets[client] else { return Bucket(tokens: burst, updated: now) }
        // A clock stepped back: no refill for the step, and the bucket's time follows it.
        let refill = max(0, now.timeIntervalSince(bucket.updated)) * perMinute / 60
        bucket.tokens = min(burst, bucket.tokens + refill)
        bucket.updated = now
        return bucket
    }
}
