import Clocks
import Foundation
import ServiceLifecycle
import Synchronization

/// The live stream held back by a spoiler delay, for a fan whose television runs behind: for each
/// delay a client may choose, rounded up to one of `delays` (so a few feeds serve every fan), a
/// feed of its own that is handed each event of the live feed once the time it happened plus the
/// delay has come on the service's clock, under the same id. A delayed client therefore resumes
/// with `Last-Event-ID` as any other, and never sees a play before its time plus its delay.
///
/// Each delayed feed keeps its events as the live feed does (its last 10,000); what waits for its
/// time is at most the last `delays.max()` seconds of the live feed.
package final class DelayedFeeds: Service, Sendable {
    /// The delays a client's is rounded up to, in seconds (0 is the live feed itself).
    package static let delays = [30, 60, 120, 300]
    /// The longest delay a client may ask for.
    package static let maximumDelay = WidgetFeed.maximumDelay

    /// The delay a client asking for `seconds` (0 to `maximumDelay`) is given: the first of
    /// `delays` at least as long, 0 for 0.
    package static func delay(for seconds: Int) -> Int {
        seconds <= 0 ? 0 : delays.first { $0 >= seconds } ?? maximumDelay
    }

    /// The live feed.
    package let live: LiveFeed
    private let clock: any WallClock
    private let lanes: [Lane]

    /// One delay's feed, and the live events waiting for their time.
    private final class Lane: Sendable {
        let delay: Int
        let feed: LiveFeed
        /// Due times never go back (they are kept in order), so the first is the next due.
        let waiting = Mutex<(events: [(due: Date, event: LiveEvent)], start: Int)>(([], 0))
        let wake: AsyncStream<Void>
        let waker: AsyncStream<Void>.Continuation

        init(delay: Int, capacity: Int, clientBuffer: Int) {
            self.delay = delay
            feed = LiveFeed(capacity: capacity, clientBuffer: clientBuffer)
            (wake, waker) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
        }

        /// The most events that wait: far more than five minutes of a busy night, reached only when
        /// nothing hands them on (the relay not running), when the oldest are let go.
        static let maximumWaiting = 200_000

        func add(_ event: LiveEvent, due: Date) {
            let wasEmpty = waiting.withLock { waiting in
                let wasEmpty = waiting.start == waiting.events.count
                if waiting.events.count - waiting.start >= Self.maximumWaiting {
                    waiting.start += 1
                    if waiting.start >= Self.maximumWaiting {
                        waiting.events.removeFirst(waiting.start)
                        waiting.start = 0
                    }
                }
                waiting.events.append((due, event))
                return wasEmpty
            }
            if wasEmpty { waker.yield() }
        }

        /// When the first waiting event is due; nil when none waits.
        var nextDue: Date? {
            waiting.withLock { $0.start < $0.events.count ? $0.events[$0.start].due : nil }
        }

        /// Takes out the events due by `now`, in order.
        func due(by now: Date) -> [LiveEvent] {
            waiting.withLock { waiting in
                var end = waiting.start
                while end < waiting.events.count, waiting.events[end].due <= now { end += 1 }
                let taken = waiting.events[waiting.start..<end].map(\.event)
                waiting.start = end
                // The taken ones are let go once they are half the array.
                if waiting.start > 64, waiting.start * 2 > waiting.events.count {
                    waiting.events.removeFirst(waiting.start)
                    waiting.start = 0
                }
                return taken
            }
        }

        var waitingCount: Int { waiting.withLock { $0.events.count - $0.start } }
    }

    /// The time the last event happened: times only move on (an item from another instance's
    /// clock never makes an event due before one already waiting).
    private let lastTime = Mutex<Date?>(nil)

    /// Holds back `live`'s events: from now on, each it appends waits in every delayed feed.
    package init(live: LiveFeed, clock: any WallClock) {
        self.live = live
        self.clock = clock
        lanes = Self.delays.map { Lane(delay: $0, capacity: live.capacity, clientBuffer: live.clientBuffer) }
        live.onAppend { [weak self] event, time in self?.record(event, at: time) }
    }

    /// The feed for a client `seconds` behind (the live feed for 0).
    package func feed(delay seconds: Int) -> LiveFeed {
        let delay = Self.delay(for: seconds)
        return lanes.first { $0.delay == delay }?.feed ?? live
    }

    /// Every feed, the live one first.
    package var feeds: [LiveFeed] { [live] + lanes.map(\.feed) }

    /// Clients of every feed.
    package var clientCount: Int { feeds.reduce(0) { $0 + $1.clientCount } }

    /// Events waiting for their time, summed over the delays.
    package var waitingCount: Int { lanes.reduce(0) { $0 + $1.waitingCount } }

    private func record(_ event: LiveEvent, at time: Date?) {
        guard event.kind != .heartbeat else { return }
        let now = clock.now()
        let happened = lastTime.withLock { last in
            // Never later than now (an item from an instance whose clock is ahead would hold back
            // every event after it), never before the last.
            let time = max(min(time ?? now, now), last ?? .distantPast)
            last = time
            return time
        }
        for lane in lanes { lane.add(event, due: happened.addingTimeInterval(TimeInterval(lane.delay))) }
    }

    /// Hands each waiting event to its delayed feed at its time, until shutdown; then ends every
    /// delayed feed's clients.
    package func run() async throws {
        await withTaskGroup(of: Void.self) { group in
            for lane in lanes {
                group.addTask { [clock] in
                    await cancelWhenGracefulShutdown {
                        await Self.pass(lane, clock: clock)
                    }
                }
            }
        }
        for lane in lanes { lane.feed.finishAll() }
    }

    private static func pass(_ lane: Lane, clock: any WallClock) async {
        var wake = lane.wake.makeAsyncIterator()
        while !Task.isCancelled {
            guard let due = lane.nextDue else {
                // Woken by the next event added (or the end: nil once cancelled).
                guard await wake.next() != nil else { return }
                continue
            }
            do { try await clock.sleep(until: due) } catch { return }
            for event in lane.due(by: clock.now()) { lane.feed.relay(event) }
        }
    }
}
