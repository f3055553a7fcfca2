import NIOCore
import Scores
import Synchronization

/// JSON bodies of the board's views (today's games, a day's scoreboard, the attempts) made once
/// per board version and shared by every request that asks for the same view: most requests
/// cost a lookup instead of encoding every game again.
final class BoardViewCache: Sendable {
    private struct Entry {
        var version: UInt64
        var body: ByteBuffer
    }

    private let board: LiveBoard
    private let entries = Mutex<[String: Entry]>([:])
    /// Distinct views kept at most (a key names a view and what it shows).
    private let capacity = 256

    init(board: LiveBoard) {
        self.board = board
    }

    /// The board's version, read before the board a view is made from: a body made from a newer
    /// board than its version is made again at the next change, never kept past it.
    var version: UInt64 { board.version }

    /// The body of the view `key` names as of `version`, made by `make` when the body kept is of
    /// an older version.
    func body(_ key: String, version: UInt64, make: () throws -> ByteBuffer) rethrows -> ByteBuffer {
        if let body = kept(key, version: version) { return body }
        let body = try make()
        keep(key, version: version, body)
        return body
    }

    /// The body kept for `key` as of `version`, if any (for a view made by asynchronous work:
    /// `keep` it once made).
    func kept(_ key: String, version: UInt64) -> ByteBuffer? {
        guard let entry = entries.withLock({ $0[key] }), entry.version == version else { return nil }
        return entry.body
    }

    func keep(_ key: String, version: UInt64, _ body: ByteBuffer) {
        entries.withLock { entries in
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[key] = Entry(version: version, body: body)
        }
    }
}
