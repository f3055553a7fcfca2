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
            // HTTP/1.1 on the same port as ever (the test client's own connection, which it opened
            // first and waits on until it is used).
            try await client.execute(uri: "/healthz", method: .get) { response in
                #expect(response.status == .ok)
            }
            for index in 0..<streams {
                let text = try #require(received.texts.withLock { $0[index] })
                let ids = text.split(separator: "\n").filter { $0.hasPrefix("id: ") }.compactMap {
                    Int($0.dropFirst(4))
                }
                // What it missed, then the live ones, none twice.
                #expect(ids == Array(last - 2...last + 3), "stream \(index): \(ids)")
            }
        }
    }

    /// What each stream received, by stream.
    final class Received: Sendable {
        let texts = Mutex([Int: String]())
    }
}
