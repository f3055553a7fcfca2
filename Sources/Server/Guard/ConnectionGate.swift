import Logging
import NIOCore
import Synchronization

/// Who is connected: the connections open in all and per client, and what was refused. Shared by
/// every connection of a server.
package final class ConnectionGate: Sendable {
    package let limits: ConnectionLimits
    private let maximum: Int

    private struct State {
        var open = 0
        var byClient: [String: Int] = [:]
        var refusedTotal = 0
        var refusedPerClient = 0
        var timedOut = 0
        var malformed = 0
        /// Live streams per client: HTTP/2 carries many on one connection, so they are counted
        /// apart from the connections.
        var streamsByClient: [String: Int] = [:]
        var refusedStreams = 0
        /// HTTP/1.1 keep-alive connections with no request in progress, by connection; and their
        /// ids, oldest idle first (an id no longer in `idle` is skipped when met).
        var idle: [Int: IdleConnection] = [:]
        var idleOrder: [Int] = []
        var idleHead = 0
        var nextConnection = 0
        /// Connections closed to make room: already released, so their own release is not counted.
        var evicted: Set<Int> = []
        var evictedIdle = 0
        /// Protocol violations per client in the current minute, and when that minute began.
        var strikes: [String: (count: Int, since: NIODeadline)] = [:]
        /// Clients whose new connections are refused until then.
        var barred: [String: NIODeadline] = [:]
        var refusedBarred = 0
        var barredClients = 0

        /// Drops from `idleOrder` the connections no longer idle once they are most of it: below
        /// the cap nothing is evicted, and the order would otherwise grow with every idle spell.
        mutating func compactIdleOrder() {
            guard idleOrder.count > 4096, idleOrder.count > 4 * idle.count else { return }
            // The latest time each became idle is its place.
            var seen = Set<Int>()
            idleOrder = idleOrder[idleHead...].reversed().filter { idle[$0] != nil && seen.insert($0).inserted }
                .reversed()
            idleHead = 0
        }

        /// Takes the connection that has been idle longest out of the counts (to be closed) for a
        /// new connection of `client`, if any: among the 64 idle longest, the first of `client`
        /// itself or of a client that would still hold more connections than `client` after the
        /// swap (so that clients holding many connections cannot take turns evicting one another,
        /// and one holding few always finds room).
        mutating func evictOldestIdle(for client: String) -> IdleConnection? {
            let newcomer = byClient[client, default: 0]
            // Entries no longer idle, at the head, are dropped as they are met.
            while idleHead < idleOrder.count, idle[idleOrder[idleHead]] == nil { idleHead += 1 }
            if idleHead > 1024 && idleHead * 2 > idleOrder.count {
                idleOrder.removeFirst(idleHead)
                idleHead = 0
            }
            var index = idleHead
            var looked = 0
            while index < idleOrder.count && looked < 64 && index - idleHead < 4096 {
                let id = idleOrder[index]
                index += 1
                guard let candidate = idle[id] else { continue }
                looked += 1
                guard candidate.client == client || byClient[candidate.client, default: 0] >= newcomer + 2 else {
                    continue
                }
                let connection = idle.removeValue(forKey: id)!
                open -= 1
                let left = byClient[connection.client, default: 1] - 1
                byClient[connection.client] = left > 0 ? left : nil
                evicted.insert(id)
                evictedIdle += 1
                return connection
            }
            return nil
        }
    }

    /// A connection the gate may close first at its cap, and how to close it: idle while any of
    /// its handlers says so (`Reason`), each saying it and taking it back for itself.
    struct IdleConnection: Sendable {
        var client: String
        var close: @Sendable () -> Void
        var reasons: Set<Reason> = []
    }

    /// Why a connection may be closed first.
    enum Reason: Sendable, Hashable {
        /// A keep-alive connection that answered every request it read, waiting for another.
        case waiting
        /// No whole first head within a fifth of the header time.
        case slowHead
        /// A request body behind its pace.
        case slowBody
    }

    private let state = Mutex(State())

    /// Requests refused before they could be read, logged once per client per minute.
    let refusals: RefusalLog

    package init(limits: ConnectionLimits, logger: Logger = Logger(label: "nohit.http")) {
        self.limits = limits
        maximum = limits.effectiveMaxConnections
        refusals = RefusalLog(logger: logger)
    }

    /// What the gate says to a new connection.
    package enum Admission: Sendable, Equatable {
        /// In; `client` is what it counts against and `connection` its number here (release it
        /// when the connection closes).
        case admitted(client: String, connection: Int)
        case refused(reason: String)
    }

    /// A connection from `address` opened: admitted, or refused (over a limit). At the cap, the
    /// keep-alive connection idle the longest is closed to make room: a client waiting for
    /// nothing gives way to one with a request (it reconnects when it has one).
    package func admit(_ address: SocketAddress?) -> Admission {
        let client = Self.clientKey(address)
        let proxy = limits.trustedProxies.trusts(address)
        let (admission, evicted): (Admission, IdleConnection?) = state.withLock { state in
            if !proxy, let until = state.barred[client] {
                if until > .now() {
                    state.refusedBarred += 1
                    return (.refused(reason: "refused after repeated protocol errors; try again later"), nil)
                }
                state.barred[client] = nil
            }
            let perClient = limits.maxConnectionsPerClient
            if perClient > 0 && !proxy && state.byClient[client, default: 0] >= perClient {
                state.refusedPerClient += 1
                return (.refused(reason: "\(perClient) connections from one client"), nil)
            }
            var evicted: IdleConnection?
            if state.open >= maximum {
                evicted = state.evictOldestIdle(for: client)
                if evicted == nil {
                    state.refusedTotal += 1
                    return (.refused(reason: "the server has \(maximum) connections open"), nil)
                }
            }
            state.open += 1
            state.byClient[client, default: 0] += 1
            state.nextConnection += 1
            return (.admitted(client: client, connection: state.nextConnection), evicted)
        }
        evicted?.close()
        return admission
    }

    /// An admitted connection closed.
    package func release(client: String, connection: Int) {
        state.withLock { state in
            state.idle[connection] = nil
            state.compactIdleOrder()
            if state.evicted.remove(connection) != nil { return }
            state.open -= 1
            let left = state.byClient[client, default: 1] - 1
            state.byClient[client] = left > 0 ? left : nil
        }
    }

    /// A connection is idle for `reason` (an HTTP/1.1 one finished its responses and waits for
    /// another request; one is slow to send its head or its body): among the first to be closed
    /// when the server is at its cap, until every reason it was idle for is taken back.
    func becameIdle(
        connection: Int, client: String, reason: Reason = .waiting, close: @escaping @Sendable () -> Void
    ) {
        state.withLock { state in
            guard !state.evicted.contains(connection) else { return }
            if state.idle[connection] == nil {
                state.idle[connection] = IdleConnection(client: client, close: close)
                state.idleOrder.append(connection)
            }
            state.idle[connection]?.reasons.insert(reason)
        }
    }

    /// `reason` no longer holds for a connection (a request arrived on a waiting one; a slow head
    /// or body came whole): it stays idle for its other reasons, if any.
    func becameBusy(connection: Int, reason: Reason = .waiting) {
        state.withLock { state in
            guard var entry = state.idle[connection] else { return }
            entry.reasons.remove(reason)
            state.idle[connection] = entry.reasons.isEmpty ? nil : entry
            state.compactIdleOrder()
        }
    }

    /// A live stream for `client` (its key): taken, or refused when the client already has as many
    /// as it may have connections (`maxConnectionsPerClient`; 0 for no limit), however many
    /// connections (HTTP/2 streams) they come on.
    package func takeStream(_ client: String) -> Bool {
        state.withLock { state in
            let perClient = limits.maxConnectionsPerClient
            if perClient > 0 && state.streamsByClient[client, default: 0] >= perClient {
                state.refusedStreams += 1
                return false
            }
            state.streamsByClient[client, default: 0] += 1
            return true
        }
    }

    /// A live stream taken with ``takeStream(_:)`` ended.
    package func giveStream(_ client: String) {
        state.withLock { state in
            let left = state.streamsByClient[client, default: 1] - 1
            state.streamsByClient[client] = left > 0 ? left : nil
        }
    }

    /// A client broke the protocol (`reason`): at `abuseStrikes` within `abuseWindow` its new
    /// connections are refused for `abusePenalty` (logged once per bar).
    func struck(client: String, reason: String) {
        guard limits.abusePenalty > .zero, limits.abuseStrikes > 0 else { return }
        let barred = state.withLock { state -> Bool in
            let now = NIODeadline.now()
            // Already barred: what its connections still open do meanwhile is not a new bar (each
            // bar was logged again, 14,175 lines in 6 minutes from one hostile client).
            if let until = state.barred[client], until > now { return false }
            var strikes = state.strikes[client] ?? (0, now)
            if now - strikes.since > limits.abuseWindow { strikes = (0, now) }
            strikes.count += 1
            // Forgotten clients: a window's strikes are all a decision needs.
            if state.strikes.count > 100_000 {
                state.strikes = state.strikes.filter { now - $0.value.since < limits.abuseWindow }
            }
            guard strikes.count >= limits.abuseStrikes else {
                state.strikes[client] = strikes
                return false
            }
            state.strikes[client] = nil
            state.barred[client] = now + limits.abusePenalty
            state.barredClients += 1
            if state.barred.count > 100_000 { state.barred = state.barred.filter { $0.value > now } }
            return true
        }
        if barred {
            let seconds = limits.abuseWindow.nanoseconds / 1_000_000_000
            let window = seconds == 60 ? "a minute" : "\(seconds) s"
            // Once per bar: at most once per client per penalty.
            refusals.logger.notice(
                "client barred after repeated protocol errors",
                metadata: [
                    "client": "\(client)", "strikes": "\(limits.abuseStrikes) within \(window)", "last": "\(reason)",
                    "refused_for": "\(limits.abusePenalty.nanoseconds / 1_000_000_000) s",
                ])
        }
    }

    /// A connection that sent no complete request head in time, answered 408.
    func timedOut(client: String, reason: String) {
        state.withLock { $0.timedOut += 1 }
        refusals.refused(client: client, status: "408", reason: reason)
    }

    /// A request that could not be read (malformed, a head too large, no `Host`), answered 400 or 431.
    func malformed(client: String, status: String, reason: String) {
        state.withLock { $0.malformed += 1 }
        refusals.refused(client: client, status: status, reason: reason)
        struck(client: client, reason: reason)
    }

    /// Counts for /metrics.
    package struct Counts: Sendable, Equatable {
        package var open: Int
        package var clients: Int
        package var refusedTotal: Int
        package var refusedPerClient: Int
        package var timedOut: Int
        package var malformed: Int
        /// Idle keep-alive connections closed to make room for new ones.
        package var evictedIdle: Int
        /// Connections refused because their client was barred for protocol errors, and the
        /// times a client was barred.
        package var refusedBarred = 0
        package var barredClients = 0
        /// Connections that would be closed first at the cap now: keep-alive ones waiting for a
        /// request, and those that have not finished their first head in a fifth of the header time.
        package var idle = 0
    }

    package var counts: Counts {
        state.withLock {
            Counts(
                open: $0.open, clients: $0.byClient.count, refusedTotal: $0.refusedTotal,
                refusedPerClient: $0.refusedPerClient, timedOut: $0.timedOut, malformed: $0.malformed,
                evictedIdle: $0.evictedIdle, refusedBarred: $0.refusedBarred, barredClients: $0.barredClients,
                idle: $0.idle.count)
        }
    }

    /// The client a connection counts against: its IPv4 address, or its IPv6 /64 (one host
    /// usually has a whole /64).
    static func clientKey(_ address: SocketAddress?) -> String {
        TrustedProxies.bytes(address).map(TrustedProxies.key) ?? "local"
    }
}
