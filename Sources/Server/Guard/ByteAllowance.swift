import Synchronization

/// Bytes that requests in progress may hold at once, in all (their bodies as read and parsed), and
/// one client's share of them: a request takes bytes as they arrive (not as its `Content-Length`
/// declares: a declaration of 8 MB trickled a byte at a time holds a byte) and gives them back when
/// done; with none left it is refused at once rather than queued, so a burst of large bodies cannot
/// take the memory, nor one client all of it.
package final class ByteAllowance: Sendable {
    package let capacity: Int
    /// What one client (an address, an IPv6 /64) may hold at once.
    package let perClient: Int
    private struct State {
        var used = 0
        var byClient: [String: Int] = [:]
    }
    private let state = Mutex(State())

    package init(_ capacity: Int, perClient: Int? = nil) {
        self.capacity = capacity
        self.perClient = min(capacity, perClient ?? capacity)
    }

    /// Takes `bytes` for `client` if they fit in all and in the client's share (the first bytes a
    /// client holds fit whatever their size when nothing else is held).
    package func reserve(_ bytes: Int, client: String = "") -> Bool {
        state.withLock { state in
            let held = state.byClient[client, default: 0]
            guard state.used == 0 || state.used + bytes <= capacity else { return false }
            guard held == 0 || held + bytes <= perClient else { return false }
            state.used += bytes
            state.byClient[client] = held + bytes
            return true
        }
    }

    package func release(_ bytes: Int, client: String = "") {
        guard bytes > 0 else { return }
        state.withLock { state in
            state.used -= bytes
            let left = state.byClient[client, default: 0] - bytes
            state.byClient[client] = left > 0 ? left : nil
        }
    }

    /// Bytes held now.
    package var inUse: Int { state.withLock { $0.used } }
}
