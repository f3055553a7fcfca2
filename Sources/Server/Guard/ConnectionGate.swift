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
        /// In; `client` is what it counts against (release it when the connection closes).
        case admitted(client: String)
        case refused(reason: String)
    }

    /// A connection from `address` opened: admitted, or refused (over a limit).
    package func admit(_ address: SocketAddress?) -> Admission {
        let client = Self.clientKey(address)
        return state.withLock { state in
            if state.open >= maximum {
                state.refusedTotal += 1
                return .refused(reason: "the server has \(maximum) connections open")
            }
            let perClient = limits.maxConnectionsPerClient
            if perClient > 0 && state.byClient[client, default: 0] >= perClient {
                state.refusedPerClient += 1
                return .refused(reason: "\(perClient) connections from one client")
            }
            state.open += 1
            state.byClient[client, default: 0] += 1
            return .admitted(client: client)
        }
    }

    /// An admitted connection closed.
    package func release(client: String) {
        state.withLock { state in
            state.open -= 1
            let left = state.byClient[client, default: 1] - 1
            state.byClient[client] = left > 0 ? left : nil
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

    /// A connection that sent no complete request head in time, answered 408.
    func timedOut(client: String, reason: String) {
        state.withLock { $0.timedOut += 1 }
        refusals.refused(client: client, status: "408", reason: reason)
    }

    /// A request that could not be read (malformed, a head too large, no `Host`), answered 400 or 431.
    func malformed(client: String, status: String, reason: String) {
        state.withLock { $0.malformed += 1 }
        refusals.refused(client: client, status: status, reason: reason)
    }

    /// Counts for /metrics.
    package struct Counts: Sendable, Equatable {
        package var open: Int
        package var clients: Int
        package var refusedTotal: Int
        package var refusedPerClient: Int
        package var timedOut: Int
        package var malformed: Int
    }

    package var counts: Counts {
        state.withLock {
            Counts(
                open: $0.open, clients: $0.byClient.count, refusedTotal: $0.refusedTotal,
                refusedPerClient: $0.refusedPerClient, timedOut: $0.timedOut, malformed: $0.malformed)
        }
    }

    /// The client a connection counts against: its IPv4 address, or its IPv6 /64 (one host
    /// usually has a whole /64).
    static func clientKey(_ address: SocketAddress?) -> String {
        switch address {
        case .v4(let v4):
            var raw = v4.address.sin_addr
            return withUnsafeBytes(of: &raw) { $0.map(String.init).joined(separator: ".") }
        case .v6(let v6):
            var raw = v6.address.sin6_addr
            let bytes = withUnsafeBytes(of: &raw) { Array($0) }
            if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF {
                return bytes[12..<16].map(String.init).joined(separator: ".")
            }
            return bytes[0..<8].map { String($0, radix: 16) }.joined(separator: ":") + "::/64"
        default:
            return "local"
        }
    }
}
