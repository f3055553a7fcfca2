import Foundation
import NIOCore
import Synchronization

/// What one client is sent in one write: the events it had not received yet, moments first (in
/// their order), then the latest `game` and `score` event of each game (in id order). A client
/// that keeps up gets one event per batch; one that falls behind gets what it missed coalesced.
package struct LiveBatch: Sendable {
    package var events: [LiveEvent]

    /// The batch as Server-Sent Events bytes. An event's `id:` line is written only where every
    /// event up to that id has been written or superseded in the batch, and then it carries the
    /// highest id written so far: a moment moved ahead of game updates carries none, so a client
    /// that reconnects with its `Last-Event-ID` misses nothing (a moment moved ahead may come
    /// again then; its own id tells the repeat).
    package var sse: ByteBuffer {
        if events.count == 1 { return events[0].frame }
        var minimumAfter = Array(repeating: Int.max, count: events.count)
        for index in stride(from: events.count - 2, through: 0, by: -1) {
            let next = events[index + 1]
            minimumAfter[index] = min(next.kind == .heartbeat ? Int.max : next.id, minimumAfter[index + 1])
        }
        var buffer = ByteBuffer()
        buffer.reserveCapacity(events.reduce(0) { $0 + $1.body.readableBytes + 16 })
        var highest = 0
        for (index, event) in events.enumerated() {
            highest = max(highest, event.id)
            if event.kind != .heartbeat, highest < minimumAfter[index] {
                buffer.writeString("id: \(highest)\n")
            }
            buffer.writeImmutableBuffer(event.body)
        }
        return buffer
    }
}
