import Foundation
import Synchronization

/// The events one client has not received yet, coalesced as they come: a newer `game` or `score`
/// event of a game supersedes the waiting one, moments are kept, and what is taken goes moments
/// first. Not thread-safe: its owner (a subscription's lock, or a connection's event loop) guards it.
struct PendingEvents {
    /// In id order; nil where a newer event superseded one.
    private var pending: [LiveEvent?] = []
    private(set) var count = 0
    private var moments = 0
    /// Index in `pending` of the waiting event of each kind and game.
    private var latest: [String: Int] = [:]

    /// Queues an event, superseding a waiting one of the same kind and game (unless `coalesce` is
    /// false); whether it superseded one, or nil when more than `limit` events would wait (nothing
    /// queued). A heartbeat is queued only when nothing else waits.
    mutating func offer(_ event: LiveEvent, coalesce: Bool = true, limit: Int) -> Bool? {
        if event.kind == .heartbeat, count > 0 { return false }
        let slot = coalesce ? event.slot : nil
        let superseded = slot.flatMap { latest[$0] }
        guard count - (superseded == nil ? 0 : 1) < limit else { return nil }
        if let superseded {
            pending[superseded] = nil
            count -= 1
        }
        if let slot { latest[slot] = pending.count }
        pending.append(event)
        count += 1
        if event.kind == .moment { moments += 1 }
        return superseded != nil
    }

    /// Everything waiting, moments first (in their order), then the rest in id order; empties it.
    mutating func take() -> LiveBatch {
        // A client that keeps up: one event, one array.
        if pending.count == 1, let event = pending[0] {
            pending.removeAll(keepingCapacity: true)
            latest.removeAll(keepingCapacity: true)
            count = 0
            moments = 0
            return LiveBatch(events: [event])
        }
        var moments: [LiveEvent] = []
        var others: [LiveEvent] = []
        moments.reserveCapacity(self.moments)
        others.reserveCapacity(count - self.moments)
        for case let event? in pending {
            if event.kind == .moment { moments.append(event) } else { others.append(event) }
        }
        pending.removeAll(keepingCapacity: true)
        latest.removeAll(keepingCapacity: true)
        count = 0
        self.moments = 0
        return LiveBatch(events: moments + others)
    }
}
