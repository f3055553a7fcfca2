import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdWSTesting
import NIOCore
import NIOWebSocket
import Synchronization
import Testing

/// The live stream through a real socket (HummingbirdTesting `.live`), on the replayed day of
/// Giolito's no-hitter: Server-Sent Events and the WebSocket.
@Suite(.timeLimit(.minutes(30))) struct LiveStreamTests {
    typealias Fixture = APIServerTests.Fixture

    /// The WebSocket's messages: `{"id":N,"event":...,"data":{...}}`.
    struct Message: Decodable, Equatable {
        var id: Int
        var event: String
    }

    @Test func serverSentEventsResumeThroughARealSocket() async throws {
        let fixture = try await Fixture { step in step.moments.contains { $0.kind == .brokenUp } }
        defer { fixture.remove() }
        let feed = fixture.feed
        let last = feed.lastID
        let live = Task {
            await feed.clientCount { $0 > 0 }
            feed.publish(.moment, data: #"{"id":"live"}"#)
            feed.finishAll()
        }
        try await fixture.live { client in
            try await client.execute(
                uri: "/api/stream", method: .get, headers: [HTTPField.Name("Last-Event-ID")!: "\(last - 3)"]
            ) { response throws in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "text/event-stream")
                let text = String(buffer: response.body)
                #expect(text.hasPrefix("retry: 2000\n\n"))
                let ids = text.split(separator: "\n").filter { $0.hasPrefix("id: ") }.compactMap {
                    Int($0.dropFirst(4))
                }
                // What it missed, then the live one: none repeated, none lost. Written one by one
                // (the replay sent before the live one came), or in one batch as the feed
                // coalesces for a client that has not caught up: moments first, a game's latest
                // state, an id line wherever a client may resume from it, the last one's at last.
                #expect(ids.first ?? 0 > last - 3 && ids.last == last + 1 && zip(ids, ids.dropFirst()).allSatisfy(<))
                #expect(text.contains(#"data: {"id":"live"}"#) && text.contains(#""kind":"broken-up""#), "\(text)")
                if ids.count == 4 {
                    #expect(ids == [last - 2, last - 1, last, last + 1])
                    #expect(text.hasSuffix("id: \(last + 1)\nevent: moment\ndata: {\"id\":\"live\"}\n\n"))
                }
            }
        }
        try await live.value
    }

    @Test func webSocketCarriesWhatWasMissedThenLiveEventsAsTheyHappen() async throws {
        let fixture = try await Fixture { step in step.moments.contains { $0.kind == .brokenUp } }
        defer { fixture.remove() }
        let feed = fixture.feed
        let last = feed.lastID
        let received = Mutex<[Message]>([])
        let texts = Mutex<[String]>([])
        try await fixture.live { client in
            try await client.ws("/api/ws?after=\(last - 2)") { inbound, outbound, _ in
                for try await message in inbound.messages(maxSize: 1 << 20) {
                    guard case .text(let text) = message else { continue }
                    let decoded = try JSONDecoder().decode(Message.self, from: Data(text.utf8))
                    let count = received.withLock {
                        $0.append(decoded)
                        return $0.count
                    }
                    texts.withLock { $0.append(text) }
                    // Live events are sent as they are published, not when the stream ends.
                    if count == 2 { feed.publish(.game, data: #"{"id":"next"}"#) }
                    if count == 3 { try await outbound.close(.normalClosure, reason: nil) }
                }
            }
        }
        let messages = received.withLock { $0 }
        #expect(messages.map(\.id) == [last - 1, last, last + 1])
        #expect(messages.last?.event == "game")
        let lastText = texts.withLock { $0.last }
        #expect(lastText == #"{"id":\#(last + 1),"event":"game","data":{"id":"next"}}"#)
        // Every message carries a whole JSON document: a moment or a game.
        for text in texts.withLock({ $0 }) {
            let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
            #expect(object?["data"] is [String: Any])
        }
        // The client's close took it off the feed.
        await feed.clientCount { $0 == 0 }
    }

    @Test func aWebSocketCutOffFromTheFeedIsToldToTryAgainLater() async throws {
        let fixture = try await Fixture { step in step.moments.contains { $0.kind == .brokenUp } }
        defer { fixture.remove() }
        let feed = fixture.feed
        let last = feed.lastID
        try await fixture.live { client in
            let close = try await client.ws("/api/ws?after=\(last - 1)") { inbound, _, _ in
                for try await _ in inbound.messages(maxSize: 1 << 20) {
                    // What a client far behind gets: its stream ended by the feed.
                    feed.finishAll()
                }
            }
            #expect(close?.closeCode == .unknown(1013))
            #expect(close?.reason?.contains("?after=") == true)
        }
    }

    @Test func aWebSocketWithABadResumePointIsRefused() async throws {
        let fixture = try await Fixture { step in step.moments.contains { $0.kind == .brokenUp } }
        defer { fixture.remove() }
        try await fixture.live { client in
            // A WebSocket client is told why in the close frame (a browser sees nothing else). Read
            // off the wire: the test client library can miss a close frame that arrives in the same
            // segment as the 101.
            let port = try #require(client.port)
            let (head, close) = try await Self.handshakeThenClose(port: port, path: "/api/ws?after=yesterday")
            #expect(head.hasPrefix("HTTP/1.1 101"))
            #expect(close.code == 1008)
            #expect(close.reason.contains("'yesterday'"))
            // The same request as plain HTTP gets the JSON error (on a connection of its own).
            let answer = try await HardeningTests.exchange(
                Array("GET /api/ws?after=yesterday HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8),
                // A whole-suite run on two cores kept this request waiting over 10 s once: the
                // bound is for a server that never answers, not a measure of speed.
                port: port, wait: .seconds(90))
            #expect(answer.hasPrefix("HTTP/1.1 400"), "\(answer.prefix(120))")
            #expect(answer.contains("'yesterday'"))
        }
        #expect(fixture.feed.clientCount == 0)
    }

    /// A WebSocket handshake over a plain socket: the response head, then the server's close
    /// frame (code and reason), read as the bytes arrive.
    static func handshakeThenClose(port: Int, path: String, key: String = "dGhlIHNhbXBsZSBub25jZQ==") async throws -> (
        head: String, close: (code: Int, reason: String)
    ) {
        let channel = try await HardeningTests.connect(port: port)
        return try await channel.executeThenClose { inbound, outbound in
            let request =
                "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n\r\n"
            try await outbound.write(ByteBuffer(string: request))
            var bytes: [UInt8] = []
            let end = Array("\r\n\r\n".utf8)
            for try await chunk in inbound {
                bytes += chunk.readableBytesView
                guard
                    let headEnd = (0...max(0, bytes.count - end.count)).first(where: {
                        bytes[$0..<min(bytes.count, $0 + end.count)].elementsEqual(end)
                    })
                else { continue }
                let head = String(decoding: bytes[..<headEnd], as: UTF8.self)
                let frame = Array(bytes[(headEnd + end.count)...])
                // A server's close frame: FIN and opcode 8, unmasked, a length under 126.
                guard frame.count >= 2, frame.count >= 2 + Int(frame[1] & 0x7F) else {
                    if !head.hasPrefix("HTTP/1.1 101") { return (head, (0, "")) }
                    continue
                }
                #expect(frame[0] == 0x88)
                let payload = frame[2..<(2 + Int(frame[1] & 0x7F))]
                guard payload.count >= 2 else { return (head, (0, "")) }
                let code = Int(payload[payload.startIndex]) << 8 | Int(payload[payload.startIndex + 1])
                return (head, (code, String(decoding: payload.dropFirst(2), as: UTF8.self)))
            }
            return (String(decoding: bytes, as: UTF8.self), (0, ""))
        }
    }

    /// Not a handshake at all: 400 (RFC 6455 4.2.1), saying what to do.
    @Test func aPlainRequestForTheWebSocketIsTold400() async throws {
        let fixture = try await Fixture { step in step.moments.contains { $0.kind == .brokenUp } }
        defer { fixture.remove() }
        try await fixture.live { client in
            try await client.execute(uri: "/api/ws", method: .get) { response throws in
                #expect(response.status == .badRequest)
                #expect(try APIServerTests.message(response.body).contains("connect with a WebSocket client"))
            }
        }
    }

    /// A handshake whose key is not 16 bytes in base64 (RFC 6455 4.1) is not upgraded.
    @Test func aHandshakeWithAMalformedKeyIsNotUpgraded() async throws {
        let fixture = try await Fixture { step in step.moments.contains { $0.kind == .brokenUp } }
        defer { fixture.remove() }
        try await fixture.live { client in
            let port = try #require(client.port)
            for key in ["dGhl", "x", String(repeating: "A", count: 24), "dGhlIHNhbXBsZSBub25jZQ=="] {
                // A request the stream then closes (1008), so that an upgraded one ends at once.
                let (head, _) = try await Self.handshakeThenClose(port: port, path: "/api/ws?after=x", key: key)
                // 24 A's are 18 bytes of base64, not 16: refused too.
                let upgraded = head.hasPrefix("HTTP/1.1 101")
                #expect(upgraded == (key == "dGhlIHNhbXBsZSBub25jZQ=="), "\(key): \(head.prefix(60))")
            }
        }
    }
}
