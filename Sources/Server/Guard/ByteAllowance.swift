import Synchronization

/// Bytes that requests in progress may hold at once, in all (their bodies as read and parsed): a
/// request reserves its share before reading and gives it back when done; with none left it is
/// refused at once rather than queued, so a burst of large bodies cannot take the memory.
package final class ByteAllowance: Sendable {
    package let capacity: Int
    private let used = Mutex(0)

    package init(_ capacity: Int) {
        self.capacity = capacity
    }

    /// Takes `bytes` if they fit (a request larger than the whole allowance fits only alone).
    package func reserve(_ bytes: Int) -> Bool {
        used.withLock { used in
            guard used == 0 || used + bytes <= capacity else { return false }
            used += bytes
            return true
        }
    }

    package func release(_ bytes: Int) {
        used.withLock { $0 -= bytes }
    }

    /// Bytes held now.
    package var inUse: Int { used.withLock { $0 } }
}
