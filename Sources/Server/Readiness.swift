import Foundation

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

    /// Reads the database (`ping`, within `deadline`) and the source's status.
    static func check(
        ping: @escaping @Sendable () async throws -> Void, source: SourceStatus?, deadline: Duration = .seconds(2)
    ) async -> Readiness {
        let started = ContinuousClock.now
        var database = Check(ok: true)
        do {
            try await withThrowingTaskGroup(of: Bool.self) { group in
                group.addTask {
                    try await ping()
                    return true
                }
                group.addTask {
                    try await Task.sleep(for: deadline)
                    return false
                }
                let answered = try await group.next() ?? false
                group.cancelAll()
                if !answered {
                    database = Check(ok: false, reason: "the database did not answer within \(deadline)")
                }
            }
        } catch {
            database = Check(ok: false, reason: "the database cannot be read: \(error)")
        }
        let elapsed = ContinuousClock.now - started
        database.latencyMS =
            (Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15 * 1000)
            .rounded() / 1000
        var checks = ["database": database]
        if let source {
            let formatter = ISO8601DateFormatter()
            checks["source"] = Check(
                ok: source.ready, reason: source.reason, lastSuccess: source.lastSuccess.map(formatter.string(from:)),
                expectedWaitSeconds: source.expectedWait, requests: source.requests.isEmpty ? nil : source.requests,
                kind: source.kind)
        }
        let degraded = checks.filter { !$0.value.ok }.map(\.key).sorted()
        return Readiness(status: degraded.isEmpty ? "ready" : "degraded", degraded: degraded, checks: checks)
    }
}
