import Testing

@testable import Server

@Suite struct LiveFeedTests {
    static func collect(_ stream: LiveSubscription) async -> [Int] {
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
        // What it missed comes whole; the moment waiting with it goes first.
        #expect(await Self.collect(resumed) == [13, 10, 11, 12])
        // What is no longer kept cannot be sent: everything kept, in order.
        #expect(await Self.collect(fromTooLongAgo) == [13, 8, 9, 10, 11, 12])
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
    @Test(.timeLimit(.minutes(30))) func waitingOnTheClientCountResumesWhenItChanges() async {
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

    /// A slow client (nothing read while 3 games change 200 times each, with 5 moments among the
    /// changes) gets, in one batch, every moment in order, then the latest state and score line of
    /// each game; the SSE bytes carry ids only where nothing before them is still to come, ending
    /// with the newest id. A fast client gets every event, in order.
    @Test func aSlowClientGetsTheLatestOfEveryGameAndEveryMomentFirst() async throws {
        let feed = LiveFeed(capacity: 10_000, clientBuffer: 64)
        let slow = feed.subscribe(after: nil)
        let fast = feed.subscribe(after: nil)
        var fastSeen: [Int] = []
        var fastIterator = fast.makeAsyncIterator()
        var latest: [String: Int] = [:]
        var moments: [Int] = []
        for round in 1...200 {
            for game in ["A", "B", "C"] {
                latest["score:\(game)"] = feed.publish(.score, data: "\(round)", key: game).id
                latest["game:\(game)"] = feed.publish(.game, data: "\(round)", key: game).id
                if let event = await fastIterator.next() { fastSeen.append(event.id) }
                if let event = await fastIterator.next() { fastSeen.append(event.id) }
            }
            if round % 40 == 0 {
                moments.append(feed.publish(.moment, data: "\(round)").id)
                if let event = await fastIterator.next() { fastSeen.append(event.id) }
            }
        }
        #expect(fastSeen == Array(1...feed.lastID))
        // 1,205 events published; the slow client never fell more than 11 behind: still connected.
        #expect(feed.clientCount == 2)
        let batch = try #require(await slow.nextBatch())
        #expect(batch.events.map(\.id) == moments + latest.values.sorted())
        #expect(batch.events.prefix(5).allSatisfy { $0.kind == .moment })
        // Everything else the slow client was offered was superseded, and counted (the fast one
        // never was behind).
        #expect(feed.coalescedCount == feed.lastID - batch.events.count)
        let text = String(buffer: batch.sse)
        let ids = text.split(separator: "\n").filter { $0.hasPrefix("id: ") }.map { Int($0.dropFirst(4))! }
        #expect(ids.last == feed.lastID)
        #expect(ids == ids.sorted())
        #expect(text.hasPrefix("id: \(moments[0])\nevent: moment\ndata: 40\n\n"))
        // A moment moved ahead of an older game update carries no id; the update after it carries
        // the moment's: a client resuming from any id it saw misses nothing.
        let update = feed.publish(.game, data: "update", key: "A").id
        let moment = feed.publish(.moment, data: "moment").id
        let ahead = try #require(await slow.nextBatch())
        #expect(ahead.events.map(\.id) == [moment, update])
        #expect(
            String(buffer: ahead.sse) == "event: moment\ndata: moment\n\nid: \(moment)\nevent: game\ndata: update\n\n")
        // A lone event is the shared frame, id and all.
        feed.publish(.game, data: "next", key: "A")
        let next = try #require(await slow.nextBatch())
        #expect(String(buffer: next.sse) == "id: \(feed.lastID)\nevent: game\ndata: next\n\n")
        feed.finishAll()
    }

    /// Moments are never coalesced: a client with more moments waiting than its buffer holds is
    /// let go (and resumes by id), never silently short of one.
    @Test func momentsAreNeverDroppedAClientTooFarBehindIsLetGo() async {
        let feed = LiveFeed(capacity: 100, clientBuffer: 4)
        let stuck = feed.subscribe(after: nil)
        for index in 1...5 { feed.publish(.moment, data: "\(index)") }
        #expect(feed.clientCount == 0)
        #expect(await Self.collect(stuck) == [1, 2, 3, 4])
        let again = feed.subscribe(after: 4)
        feed.finishAll()
        #expect(await Self.collect(again) == [5])
    }

    /// A client resuming from far back (`?after=0`) is given the day's state, not a copy of every
    /// kept event: each moment, and the newest `game` and `score` event of each game. Thousands of
    /// such clients hold hundreds of events between them per game, not 10,000 each; one resuming
    /// from close by still gets what it missed whole.
    @Test func aResumeFromFarBackHoldsTheStateNotTheKeptEvents() async {
        let feed = LiveFeed(capacity: 10_000, clientBuffer: 1024)
        var newest: [String: Int] = [:]
        var moments: [Int] = []
        for index in 0..<12_000 {
            let game = "game\(index % 15)"
            if index % 997 == 0 {
                moments.append(feed.publish(.moment, data: "\(index)").id)
            }
            let kind: LiveEvent.Kind = index % 3 == 0 ? .score : .game
            newest["\(kind.rawValue):\(game)"] = feed.publish(kind, data: "\(index)", key: game).id
        }
        let kept = feed.keptEvents(after: 0)
        #expect(kept.count == 10_000)
        let keptMoments = moments.filter { $0 > kept[0].id }
        let clients = (0..<2_000).map { _ in feed.subscribe(after: 0) }
        feed.finishAll()
        for client in clients {
            var ids: [Int] = []
            for await event in client { ids.append(event.id) }
            // Moments first, then the newest of each game and kind, in order.
            #expect(ids == keptMoments + newest.values.sorted())
        }
        // Within the client's buffer, what it missed comes whole.
        let close = LiveFeed(capacity: 10_000, clientBuffer: 1024)
        for index in 0..<2_000 { close.publish(.game, data: "\(index)", key: "game\(index % 15)") }
        let resumed = close.subscribe(after: 1_500)
        close.finishAll()
        #expect(await Self.collect(resumed) == Array(1_501...2_000))
    }
}

/// The bytes request bodies hold: taken as they come, within a client's share.
@Suite struct ByteAllowanceTests {
    @Test func aClientHoldsItsShareAndNoMoreOthersTheRest() {
        let bodies = ByteAllowance(16, perClient: 10)
        #expect(bodies.reserve(8, client: "a"))
        #expect(!bodies.reserve(8, client: "a"))
        #expect(bodies.reserve(2, client: "a"))
        #expect(bodies.reserve(6, client: "b"))
        #expect(!bodies.reserve(1, client: "c"))
        bodies.release(10, client: "a")
        #expect(bodies.inUse == 6)
        // Alone, a client's first bytes fit whatever their size.
        bodies.release(6, client: "b")
        #expect(bodies.reserve(20, client: "c"))
        #expect(!bodies.reserve(1, client: "d"))
    }
}

/// A client barred for protocol errors is logged once per bar, however many more errors its
/// connections still open make meanwhile.
@Suite struct BarLogTests {
    @Test func aBarIsLoggedOnceWhateverItsOpenConnectionsDoMeanwhile() {
        let captured = HardeningTests.CapturedLines()
        var limits = ConnectionLimits()
        limits.abusePenalty = .seconds(600)
        let gate = ConnectionGate(limits: limits, logger: captured.logger)
        for _ in 0..<(limits.abuseStrikes * 40) { gate.struck(client: "10.0.0.9", reason: "HTTP/2: too many resets") }
        let bars = captured.lines.withLock { $0 }.filter {
            $0.message == "client barred after repeated protocol errors"
        }
        #expect(bars.count == 1)
        #expect(gate.counts.barredClients == 1)
    }
}
