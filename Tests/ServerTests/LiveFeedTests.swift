import Testing

@testable import Server

@Suite struct LiveFeedTests {
    static func collect(_ stream: AsyncStream<LiveEvent>) async -> [Int] {
        var ids: [Int] = []
        for await event in stream { ids.append(event.id) }
        return ids
    }

    @Test func resumesAfterTheLastSeenEventOnceTheRingHasWrapped() async {
        let feed = LiveFeed(capacity: 5)
        for index in 1...12 { feed.publish(.game, data: "\(index)") }
        // Kept: 8...12.
        let resumed = feed.subscribe(after: 9)
        let fromTooLongAgo = feed.subscribe(after: 2)
        let fresh = feed.subscribe(after: nil)
        feed.publish(.moment, data: "13")
        feed.finishAll()
        #expect(await Self.collect(resumed) == [10, 11, 12, 13])
        // What is no longer kept cannot be sent: everything kept, in order, then live.
        #expect(await Self.collect(fromTooLongAgo) == [8, 9, 10, 11, 12, 13])
        #expect(await Self.collect(fresh) == [13])
        #expect(feed.lastID == 13)
    }

    @Test func aClientThatFallsBehindIsCutOffAndCatchesUpByReconnecting() async {
        let feed = LiveFeed(capacity: 100, clientBuffer: 8)
        let stuck = feed.subscribe(after: nil)
        let other = feed.subscribe(after: nil)
        for index in 1...6 { feed.publish(.game, data: "\(index)") }
        // The other client reads as it goes.
        var seen: [Int] = []
        var iterator = other.makeAsyncIterator()
        for _ in 1...6 { if let event = await iterator.next() { seen.append(event.id) } }
        for index in 7...40 {
            feed.publish(.game, data: "\(index)")
            if let event = await iterator.next() { seen.append(event.id) }
        }
        // The stuck one held 8 events and was dropped at the 9th; publishing never waited for it.
        #expect(feed.clientCount == 1)
        #expect(await Self.collect(stuck) == Array(1...8))
        #expect(seen == Array(1...40))
        // Reconnecting with its last id, it gets the 32 it missed (more than its usual margin).
        let again = feed.subscribe(after: 8)
        feed.finishAll()
        #expect(await Self.collect(again) == Array(9...40))
    }

    /// Waiting for clients to come and go resumes on the change itself, whichever way it happens.
    @Test(.timeLimit(.minutes(1))) func waitingOnTheClientCountResumesWhenItChanges() async {
        let feed = LiveFeed(capacity: 4, clientBuffer: 1)
        await feed.clientCount { $0 == 0 }
        let arrived = Task { await feed.clientCount { $0 == 2 } }
        let first = feed.subscribe(after: nil)
        let second = feed.subscribe(after: nil)
        await arrived.value
        // A client that falls behind is dropped; one that stops listening goes on termination.
        let oneLeft = Task { await feed.clientCount { $0 == 1 } }
        let cancelled = Task { for await _ in first {} }
        cancelled.cancel()
        await oneLeft.value
        let none = Task { await feed.clientCount { $0 == 0 } }
        for index in 1...3 { feed.publish(.game, data: "\(index)") }
        await none.value
        #expect(await Self.collect(second).count == 1)
    }
}
