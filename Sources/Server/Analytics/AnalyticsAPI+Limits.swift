import Analytics
import Clocks
import Foundation
import Hummingbird
import NIOCore
import Storage

/// What a Keen request may spend before its work: its body's bytes (within all requests' and its
/// client's share), events and queries per minute per key and per client.
extension AnalyticsAPI {
    /// A query's or a key's body: parameters, not events.
    static let maximumQueryBody = 1_048_576

    /// A batch past the limit, refused; its events are charged to the client all the same (not
    /// to the key: the web app's is public), so one that sends such batches again and again is
    /// refused before its bodies are read.
    func tooManyEvents(_ total: Int, client: String) -> KeenError {
        eventsPerClient.charge(client, cost: Double(total), now: SteadyWallClock.process.now())
        return KeenError.tooLarge(
            "a batch holds at most \(limits.maximumBatchEvents) events, not \(total); send them in several batches")
    }

    /// Reads the body (at most `limit` bytes: 413 past it) within the bytes all requests, and the
    /// client's share of them, may have in flight at once (503 with Retry-After when they are
    /// taken), taking them as they arrive, and hands it to `work`; its bytes are given back when
    /// `work` is done with them.
    func withBody<Value>(
        _ request: Request, _ context: APIRequestContext, upTo limit: Int, _ work: ([UInt8]) async throws -> Value
    ) async throws -> Value {
        let declared = request.headers[.contentLength].flatMap { Int($0) }
        if let declared, declared > limit {
            Self.closeAfterAnswer(request, context)
            throw KeenError.tooLarge("the body is larger than \(limit) bytes")
        }
        let client = context.client
        var held = 0
        defer { bodies.release(held, client: client) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(min(declared ?? 0, 1_048_576))
        for try await chunk in request.body {
            guard bytes.count + chunk.readableBytes <= limit else {
                Self.closeAfterAnswer(request, context)
                throw KeenError.tooLarge("the body is larger than \(limit) bytes")
            }
            guard bodies.reserve(chunk.readableBytes, client: client) else {
                Self.closeAfterAnswer(request, context)
                var error = KeenError(
                    status: 503, code: "ServiceUnavailableError",
                    "the server is reading as many request bodies as it takes, from this client or in all; try again in a second"
                )
                error.retryAfter = 1
                throw error
            }
            held += chunk.readableBytes
            bytes.append(contentsOf: chunk.readableBytesView)
        }
        return try await work(bytes)
    }

    // MARK: Limits

    /// Has an HTTP/1.1 connection closed once its answer is written, instead of reading the rest
    /// of a large request body refused unread (up to the limit's megabytes, for nothing). A small
    /// body is read to its end as usual: it has most likely arrived, and a client still sending
    /// when the connection closes may lose the answer.
    static func closeAfterAnswer(_ request: Request, _ context: APIRequestContext) {
        let declared = request.headers[.contentLength].flatMap { Int($0) }
        let large = declared.map { $0 > 64 * 1024 } ?? (request.headers[.transferEncoding] != nil)
        guard large else { return }
        // HTTPConnectionStateHandler closes after the answer in progress on this event (as on a
        // graceful stop).
        context.channel.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
    }

    /// The client a request counts against, if its writes may go on (a key or client over its
    /// rate is refused before its body is read).
    func checkWriteRoom(_ key: AnalyticsKey, _ request: Request, _ context: APIRequestContext) throws -> String {
        let client = context.client
        let now = SteadyWallClock.process.now()
        if let wait = eventsPerKey.waitForRoom(key.rateKey, now: now) ?? eventsPerClient.waitForRoom(client, now: now) {
            Self.closeAfterAnswer(request, context)
            throw Self.overRate("events", limits.eventsPerMinutePerClient, limits.eventsPerMinutePerKey, wait: wait)
        }
        return client
    }

    /// Takes `count` events from the key's and the client's allowances, or refuses them all.
    func takeWrites(_ count: Int, key: AnalyticsKey, client: String) throws {
        let now = SteadyWallClock.process.now()
        if let wait = eventsPerClient.take(client, cost: Double(count), now: now) {
            throw Self.overRate("events", limits.eventsPerMinutePerClient, limits.eventsPerMinutePerKey, wait: wait)
        }
        if let wait = eventsPerKey.take(key.rateKey, cost: Double(count), now: now) {
            throw Self.overRate("events", limits.eventsPerMinutePerClient, limits.eventsPerMinutePerKey, wait: wait)
        }
    }

    func takeQuery(key: AnalyticsKey, _ context: APIRequestContext) throws {
        // The API's clock: a test's manual one makes a minute's allowance exact on a loaded machine.
        let now = clock.now()
        let client = context.client
        if let wait = queriesPerClient.take(client, now: now) ?? queriesPerKey.take(key.rateKey, now: now) {
            throw Self.overRate(
                "queries", limits.queriesPerMinutePerClient, limits.queriesPerMinutePerKey, wait: wait)
        }
    }

    static func overRate(_ what: String, _ perClient: Int, _ perKey: Int, wait: TimeInterval = 1) -> KeenError {
        var error = KeenError.rateLimited(
            "too many \(what): at most \(perClient) a minute from one client and \(perKey) a minute with one key; try again in \(Int(wait.rounded(.up))) s"
        )
        error.retryAfter = Int(min(60, max(1, wait.rounded(.up))))
        return error
    }
}
