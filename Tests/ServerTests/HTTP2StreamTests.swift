import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import Synchronization
import Testing

@testable import Server

/// The live stream over HTTP/2 with prior knowledge, beside HTTP/1.1 on the same port: many
/// streams on one connection, each getting what it missed and then every new event.
@Suite struct HTTP2StreamTests {
    @Test func manyLiveStreamsShareOneHTTP2Connection() async throws {
        let fixture = try await APIServerTests.Fixture { step in step.moments.contains { $0.kind == .brokenUp } }
        defer { fixture.remove() }
        let feed = fixture.feed
        let last = feed.lastID
        try await fixture.live { client in
            let port = try #require(client.port)
            let (connection, channel) = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connect(host: "127.0.0.1", port: port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        (
                            channel,
                            try channel.pipeline.syncOperations.configureAsyncHTTP2Pipeline(mode: .client) { stream in
                                stream.eventLoop.makeSucceededVoidFuture()
                            }
                        )
                    }
                }
            let streams = 8
            let received = Received()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<streams {
                    let stream = try await channel.openStream { stream in
                        stream.eventLoop.makeCompletedFuture {
                            try NIOAsyncChannel<HTTP2Frame.FramePayload, HTTP2Frame.FramePayload>(
                                wrappingChannelSynchronously: stream)
                        }
                    }
                    group.addTask {
                        try await stream.executeThenClose { inbound, outbound in
                            // Each resumes three events back, as a reconnecting page would.
                            let headers: HPACKHeaders = [
                                ":method": "GET", ":scheme": "http", ":authority": "127.0.0.1:\(port)",
                                ":path": "/api/stream", "last-event-id": "\(last - 3)",
                            ]
                            try await outbound.write(.headers(.init(headers: headers, endStream: true)))
                            var status = ""
                            for try await frame in inbound {
                                switch frame {
                                case .headers(let head):
                                    status = head.headers.first(name: ":status") ?? status
                                case .data(let data):
                                    guard case .byteBuffer(let bytes) = data.data else { continue }
                                    let text = received.texts.withLock {
                                        $0[index, default: ""] += String(buffer: bytes)
                                        return $0[index]!
                                    }
                                    if text.contains("\"live-\(index % 2)\"") && text.contains("\"live-end\"") {
                                        #expect(status == "200")
                                        return
                                    }
                                default:
                                    continue
                                }
                            }
                        }
                    }
                }
                // Every stream is listening: new events reach them all.
                await feed.clientCount { $0 >= streams }
                feed.publish(.moment, data: #"{"id":"live-0"}"#)
                feed.publish(.moment, data: #"{"id":"live-1"}"#)
                feed.publish(.moment, data: #"{"id":"live-end"}"#)
                try await group.waitForAll()
            }
            try await connection.close()
            // HTTP/1.1 on the same port as ever, on a connection of its own made now (the test
            // client's own, opened before the body ran, sat idle all along: on a loaded machine the
            // streams took long enough that its first request was never answered, .readTimeout).
            // The answer may wait on a loaded machine: the in-process server shares the test
            // process's two event loops and two cooperative threads with every test running beside
            // it (a full run once took 300 s over this test's streams and more than the client's
            // default 15 s over this request).
            let healthz = try await TestClient.withClient(
                host: "127.0.0.1", port: port, configuration: .init(timeout: .seconds(120))
            ) { http1 in
                try await http1.execute(.init("/healthz", method: .get, authority: "127.0.0.1:\(port)"))
            }
            #expect(healthz.status == .ok)
            for index in 0..<streams {
                let text = try #require(received.texts.withLock { $0[index] })
                let ids = text.split(separator: "\n").filter { $0.hasPrefix("id: ") }.compactMap {
                    Int($0.dropFirst(4))
                }
                // What it missed, then the live ones (all three moments are in the text), none
                // twice: one by one, or coalesced in a batch for a stream that had not caught up
                // (moments first, a game's latest state, an id wherever a client may resume).
                #expect(
                    ids.first ?? 0 > last - 3 && ids.last == last + 3 && zip(ids, ids.dropFirst()).allSatisfy(<),
                    "stream \(index): \(ids)")
                if ids.count == 6 { #expect(ids == Array(last - 2...last + 3), "stream \(index): \(ids)") }
            }
        }
    }

    /// Opens an HTTP/2 connection to the fixture's live server.
    static func connect(port: Int) async throws -> (Channel, NIOHTTP2Handler.AsyncStreamMultiplexer<Void>) {
        try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    (
                        channel,
                        try channel.pipeline.syncOperations.configureAsyncHTTP2Pipeline(mode: .client) { stream in
                            stream.eventLoop.makeSucceededVoidFuture()
                        }
                    )
                }
            }
    }

    /// Sends `headers` on a new stream and returns the answer's status; with `hold`, keeps reading
    /// (a live stream held open) until the task is cancelled.
    static func ask(
        _ multiplexer: NIOHTTP2Handler.AsyncStreamMultiplexer<Void>, _ headers: HPACKHeaders,
        hold: (@Sendable (String) -> Void)? = nil
    ) async throws -> String {
        let stream = try await multiplexer.openStream { stream in
            stream.eventLoop.makeCompletedFuture {
                try NIOAsyncChannel<HTTP2Frame.FramePayload, HTTP2Frame.FramePayload>(
                    wrappingChannelSynchronously: stream)
            }
        }
        return try await stream.executeThenClose { inbound, outbound in
            try await outbound.write(.headers(.init(headers: headers, endStream: true)))
            var status = ""
            for try await frame in inbound {
                if case .headers(let head) = frame, let answer = head.headers.first(name: ":status") {
                    status = answer
                    guard let hold else { return status }
                    hold(status)
                }
            }
            return status
        }
    }

    /// HTTP/2 carries many streams on one connection: a client's live streams are counted as
    /// streams, against the same limit as its connections, and its header fields against the same
    /// limit as over HTTP/1.1.
    @Test func streamsAndHeaderFieldsOverHTTP2CountAsOverHTTP11() async throws {
        var fixture = try await APIServerTests.Fixture { _ in true }
        defer { fixture.remove() }
        var limits = ConnectionLimits()
        limits.maxConnectionsPerClient = 3
        limits.headerTimeout = .seconds(600)
        fixture.options.gate = ConnectionGate(limits: limits)
        let feed = fixture.feed
        try await fixture.live { client in
            let port = try #require(client.port)
            let (connection, multiplexer) = try await Self.connect(port: port)
            let stream: HPACKHeaders = [
                ":method": "GET", ":scheme": "http", ":authority": "127.0.0.1:\(port)", ":path": "/api/stream",
            ]
            let (answers, answered) = AsyncStream.makeStream(of: String.self)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<3 {
                    group.addTask { _ = try await Self.ask(multiplexer, stream) { answered.yield($0) } }
                }
                // The three are answered (and so counted) before the fourth is asked.
                var statuses: [String] = []
                for await status in answers {
                    statuses.append(status)
                    if statuses.count == 3 { break }
                }
                #expect(statuses == ["200", "200", "200"])
                // A fourth live stream from the same client, on the same connection: refused.
                let fourth = try await Self.ask(multiplexer, stream)
                #expect(fourth == "429")
                // Any other request is still served.
                var health = stream
                health.replaceOrAdd(name: ":path", value: "/healthz")
                let healthy = try await Self.ask(multiplexer, health)
                #expect(healthy == "200")
                // Too many header fields: 431, as over HTTP/1.1.
                var crowded = health
                for index in 0..<150 { crowded.add(name: "x-field-\(index)", value: "y") }
                let refused = try await Self.ask(multiplexer, crowded)
                #expect(refused == "431")
                // Closing the connection ends the held streams (cancelling a read does not).
                try await connection.close()
                group.cancelAll()
            }
        }
    }

    /// A client's streams are given back as they end, and counted apart from other clients'.
    @Test func streamsAreCountedPerClientAndGivenBack() {
        var limits = ConnectionLimits()
        limits.maxConnectionsPerClient = 2
        let gate = ConnectionGate(limits: limits)
        #expect(gate.takeStream("203.0.113.5"))
        #expect(gate.takeStream("203.0.113.5"))
        #expect(!gate.takeStream("203.0.113.5"))
        #expect(gate.takeStream("198.51.100.7"))
        gate.giveStream("203.0.113.5")
        #expect(gate.takeStream("203.0.113.5"))
        // No limit (0): behind a proxy every client is one address.
        var open = ConnectionLimits()
        open.maxConnectionsPerClient = 0
        let proxied = ConnectionGate(limits: open)
        #expect((0..<1000).allSatisfy { _ in proxied.takeStream("127.0.0.1") })
    }

    /// What each stream received, by stream.
    final class Received: Sendable {
        let texts = Mutex([Int: String]())
    }
}
