import Foundation
import NIOCore
import Synchronization

/// One event of the live stream: a game's new state or a moment, numbered in order.
package struct LiveEvent: Sendable, Hashable {
    package enum Kind: String, Sendable, Hashable {
        case game
        case moment
        /// A game's score line changed: runs, hits, errors, the half-inning or the status.
        case score
        /// Not kept and not numbered: tells the server to write a keep-alive, which also finds
        /// clients that went away.
        case heartbeat
    }

    /// The event's fields, in one object: a client's queue holds a reference, so queueing an
    /// event for each of thousands of clients retains one object, not its buffers and strings.
    private final class Storage: Sendable {
        let id: Int
        let kind: Kind
        let key: String?
        let data: String
        let frame: ByteBuffer
        let body: ByteBuffer
        let message: ByteBuffer
        /// Kind and game: what a newer event supersedes (nil for moments), made once.
        let slot: String?

        init(id: Int, kind: Kind, key: String?, data: String) {
            self.id = id
            self.kind = kind
            self.key = key
            self.data = data
            body = ByteBuffer(
                string: kind == .heartbeat ? ": keep-alive\n\n" : "event: \(kind.rawValue)\ndata: \(data)\n\n")
            frame = ByteBuffer(
                string: kind == .heartbeat
                    ? ": keep-alive\n\n" : "id: \(id)\nevent: \(kind.rawValue)\ndata: \(data)\n\n")
            message = ByteBuffer(
                string: kind == .heartbeat ? "" : #"{"id":\#(id),"event":"\#(kind.rawValue)","data":\#(data)}"#)
            slot = key.map { "\(kind.rawValue):\($0)" }
        }
    }

    private let storage: Storage

    package var id: Int { storage.id }
    package var kind: Kind { storage.kind }
    /// The game a `game` or `score` event is about: a newer event of the same kind and game
    /// supersedes it for a client that has not received it yet. Nil for moments (never
    /// superseded).
    package var key: String? { storage.key }
    /// The event's JSON document.
    package var data: String { storage.data }
    /// The event as Server-Sent Events bytes with its id, encoded once and shared by every
    /// client's write.
    package var frame: ByteBuffer { storage.frame }
    /// The same without the `id:` line, for a batch whose ids are written where they hold (see
    /// `LiveBatch`).
    package var body: ByteBuffer { storage.body }
    /// The event as one WebSocket text message, `{"id":N,"event":"moment","data":{...}}`, also
    /// encoded once.
    package var message: ByteBuffer { storage.message }
    /// Kind and game (`game:CHA202008250`): the waiting event a newer one supersedes.
    var slot: String? { storage.slot }

    package init(id: Int, kind: Kind, data: String, key: String? = nil) {
        storage = Storage(id: id, kind: kind, key: kind == .moment ? nil : key, data: data)
    }

    package static func == (lhs: LiveEvent, rhs: LiveEvent) -> Bool {
        lhs.storage === rhs.storage
            || (lhs.id == rhs.id && lhs.kind == rhs.kind && lhs.key == rhs.key && lhs.data == rhs.data)
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(id)
        hasher.combine(kind)
        hasher.combine(key)
        hasher.combine(data)
    }
}
