import Clocks
import Foundation
import Logging
import Pipeline
import Storage

/// What `/readyz` says of the source of games, read at each request: ready, or degraded and why.
/// The source fills it in (`nohit serve` from its Stats API poller; a replayed day is always
/// current).
package struct SourceStatus: Sendable {
    /// `replay` or `statsapi`.
    package var kind: String
    package var ready: Bool
    /// Why it is not ready.
    package var reason: String?
    package var lastSuccess: Date?
    /// Seconds the source may rightly stay quiet now (its next request's planned wait).
    package var expectedWait: TimeInterval?
    /// Requests since start by outcome (`ok`, `http`, `timeout`, `connection`, `unreadable`).
    package var requests: [String: Int] = [:]
    /// Each game followed (by `gamePk`): its feed requests and how late changes are read.
    package var games: [Int: Game] = [:]

    /// One game's feed requests.
    package struct Game: Sendable {
        package var gameID: String?
        package var lastSuccess: Date?
        package var answered: Int
        package var failed: Int
        /// The feed's own time of its latest change, as last read.
        package var feedTime: Date?
        /// Seconds from that change to this server reading it.
        package var feedLag: TimeInterval?

        package init(
            gameID: String?, lastSuccess: Date?, answered: Int, failed: Int, feedTime: Date?, feedLag: TimeInterval?
        ) {
            self.gameID = gameID
            self.lastSuccess = lastSuccess
            self.answered = answered
            self.failed = failed
            self.feedTime = feedTime
            self.feedLag = feedLag
        }
    }

    package init(kind: String, ready: Bool, reason: String? = nil) {
        self.kind = kind
        self.ready = ready
        self.reason = reason
    }
}

/// `/readyz`'s answer: ready when the database answers within its deadline and the source is
/// current; otherwise 503 with each degraded part named.
struct Readiness: Encodable {
    struct Check: Encodable {
        var ok: Bool
        var reason: String?
        var latencyMS: Double?
        var lastSuccess: String?
        var expectedWaitSeconds: Double?
        var requests: [String: Int]?
        var kind: String?

        enum CodingKeys: String, CodingKey {
            case ok, reason, kind, requests
            case latencyMS = "latency_ms"
            case lastSuccess = "last_success"
            case expectedWaitSeconds = "expected_wait_seconds"
        }
    }

    var status: String
    var degraded: [String]
    var checks: [String: Check]

    /// Reads the database (`ping`, within `deadline`) and the source's status; `storage` is a
    /// spell of writes the database refuses (a full disk), which degrades the database though it
    /// still reads.
    static func check(
        ping: @escaping @Sendable () async throws -> Void, source: SourceStatus?, faults: [DeliveryFaults.Fault] = [],
        storage: StorageHealth.Failing? = nil, deadline: Duration = .seconds(2)
    ) async -> Readiness {
        let started = ContinuousClock.now
        var database = Check(ok: true)
        switch await Deadline.result(within: deadline, ping) {
        case .none:
            database = Check(ok: false, reason: "the database did not answer within \(deadline)")
        case .some(.failure(let error)):
            // The error's text (paths, hosts) stays in the server's log.
            Logger(label: "nohit.readyz").error("the database cannot be read", metadata: ["error": "\(error)"])
            database = Check(ok: false, reason: "the database cannot be read (the log says why)")
        case .some(.success):
            if let storage {
                database = Check(
                    ok: false,
                    reason: "writes refused since \(ISO8601DateFormatter().string(from: storage.since)) "
                        + "(\(storage.failures) so far, the last: \(storage.what)): \(storage.fault)")
            }
        }
        let elapsed = ContinuousClock.now - started
        // Milliseconds, to the microsecond.
        database.latencyMS =
            (Double(elapsed.components.seconds) * 1_000_000 + Double(elapsed.components.attoseconds) / 1e12)
            .rounded() / 1000
        var checks = ["database": database]
        if let source {
            let formatter = ISO8601DateFormatter()
            checks["source"] = Check(
                ok: source.ready, reason: source.reason, lastSuccess: source.lastSuccess.map(formatter.string(from:)),
                expectedWaitSeconds: source.expectedWait, requests: source.requests.isEmpty ? nil : source.requests,
                kind: source.kind)
        }
        if !faults.isEmpty {
            // A provider refusing the configuration: its deliveries wait for the operator.
            checks["delivery"] = Check(ok: false, reason: faults.map(\.description).joined(separator: "; "))
        }
        let degraded = checks.filter { !$0.value.ok }.map(\.key).sorted()
        return Readiness(status: degraded.isEmpty ? "ready" : "degraded", degraded: degraded, checks: checks)
    }
}
