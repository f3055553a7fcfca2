import Foundation

/// What the Keen API lets a key and a client spend, Keen's own limits where it has them: an event
/// of 900 KB, a bulk payload of 10,000,000 bytes, 200 ad-hoc queries a minute, a query's time. The
/// web app's write key is public (`/api/config` gives it to anyone), so every write is bounded by
/// bytes and events, per key and per client, and the bodies being read at once by bytes in all.
/// Every value is a setting (`analytics.*`, see docs/configuration.md); a rate of 0 lets everything through.
package struct AnalyticsLimits: Sendable {
    /// An events request's body (Keen: 10,000,000 bytes for a bulk payload).
    package var maximumBatchBytes = 10_000_000
    /// Events in one batch: the iOS client sends its whole queue, at most 10,000 events.
    package var maximumBatchEvents = 10_000
    /// Distinct property names (leaf paths) a collection may hold, and collections a project: past
    /// them an event bringing a new one is refused alone (the public write key cannot grow the
    /// schema every write and restart reads without bound).
    package var propertiesPerCollection = 1_000
    package var collectionsPerProject = 1_000
    /// Saved queries and datasets a project may hold (each cached one is run again on its own;
    /// a dataset is computed ahead, bucket by bucket).
    package var savedQueriesPerProject = 1_000
    package var datasetsPerProject = 100
    /// Events one write key may store a minute, in bursts of a sixth of it.
    package var eventsPerMinutePerKey = 600_000
    /// Events one client (an IPv4 address, an IPv6 /64) may send a minute, in bursts of a sixth
    /// of it (10,000 by default: an iOS client's whole queue at once).
    package var eventsPerMinutePerClient = 60_000
    /// Bytes of request bodies read and checked at once, in all: more are answered 503 with
    /// Retry-After (a parsed body takes several times its size).
    package var bodyBytesInFlight = 16 * 1_048_576
    /// Queries one key may run a minute (Keen: 200 ad-hoc queries), and one client.
    package var queriesPerMinutePerKey = 200
    package var queriesPerMinutePerClient = 200
    /// Seconds a query may run before it stops itself (Keen answers 504 past 300 s; here queries
    /// share the machine with the alerts).
    package var querySeconds: Double = 30
    /// Bytes of state a query may hold (distinct values, groups, samples, extracted events).
    package var queryMemoryBytes = 256 * 1_048_576
    /// Queries running at once (the others wait their turn, at most `queryWaitSeconds`): all cores
    /// but one, so the alerts and the API keep one.
    package var concurrentQueries = max(1, ProcessInfo.processInfo.activeProcessorCount - 1)
    /// How long a query waits for its turn before it is answered 429 (Keen's "fast failure": 10 s).
    package var queryWaitSeconds: Double = 10

    package init() {}

    /// No rate limits (benchmarks and tests that write a million events from one client).
    package static var unlimitedRates: AnalyticsLimits {
        var limits = AnalyticsLimits()
        limits.eventsPerMinutePerKey = 0
        limits.eventsPerMinutePerClient = 0
        limits.queriesPerMinutePerKey = 0
        limits.queriesPerMinutePerClient = 0
        return limits
    }
}
