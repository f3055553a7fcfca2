import Foundation
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Keen's API attacked through its public write key and its read key, against a real
/// `nohit serve` (SQLite; PostgreSQL too when `NOHIT_TEST_POSTGRES` is set): one request never
/// stops the process, a batch never amplifies memory, a query never runs past its limit nor
/// holds the readers the service needs. Each test failed on main at 953a705 (issue 40, items 1-3).
@Suite(.serialized, .ownThreads) struct HostileAnalyticsTests {
    static var databases: [String?] {
        [nil] + (ProcessInfo.processInfo.environment["NOHIT_TEST_POSTGRES"].map { [$0] } ?? [])
    }

    static func send(
        _ method: String, _ url: String, key: String? = nil, body: Data? = nil, timeout: TimeInterval = 60
    ) async throws -> (status: Int, headers: [String: String], body: Data) {
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = method
        request.timeoutInterval = timeout
        if let key { request.setValue(key, forHTTPHeaderField: "Authorization") }
        if let body {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = body
        }
        let (data, response) = try await URLSession.shared.data(for: request)
        let http = try #require(response as? HTTPURLResponse)
        var fields: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { fields[name.lowercased()] = value }
        }
        return (http.statusCode, fields, data)
    }

    static func errorCode(_ data: Data) -> String? {
        (try? JSONSerialization.jsonObject(with: data) as? [String: Any])?["error_code"] as? String
    }

    /// Resident memory of a process, in bytes (Linux's /proc).
    static func residentBytes(_ pid: Int32) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kilobytes = Int(line.split(separator: " ", omittingEmptySubsequences: true)[1])
        else { return 0 }
        return kilobytes * 1024
    }

    /// Item 2: `latest` or `limit` of 2^63 or more trapped on conversion and ended the server.
    @Test(arguments: databases)
    func hugeNumbersAreKeensErrorsAndTheServerStays(_ database: String?) async throws {
        try await AnalyticsServer.with(database: database) { server in
            let base = "\(server.address)/3.0/projects/\(server.project)/queries"
            let read = server.keys["read_key"]!
            for (path, code) in [
                ("extraction?event_collection=x&latest=1e19", "QueryTooLargeError"),
                ("extraction?event_collection=x&latest=9223372036854775808", "QueryTooLargeError"),
                ("extraction?event_collection=x&latest=1000000000", "QueryTooLargeError"),
                ("count?event_collection=x&group_by=a&order_by=%22result%22&limit=1e19", "InvalidParameterError"),
                (
                    "count?event_collection=x&timeframe=this_7_days&interval=every_9223372036854775807_weeks",
                    "IntervalDefinitionError"
                ),
                ("percentile?event_collection=x&target_property=a&percentile=1e400", "MissingRequiredPropertyError"),
            ] {
                let answer = try await Self.send("GET", "\(base)/\(path)", key: read)
                #expect(answer.status == 400, "\(path): \(answer.status)")
                #expect(Self.errorCode(answer.body) == code, "\(path): \(String(decoding: answer.body, as: UTF8.self))")
            }
            let health = try await Self.send("GET", "\(server.address)/healthz")
            #expect(health.status == 200)
            #expect(server.process.isRunning)
        }
    }

    /// Item 1: a batch of many bad events was answered with ~58 times its size and raised the
    /// server's memory by 649 MB; 2 MB of `{}` stored 666,666 events at once. Now a batch holds at
    /// most 10,000 events, the answer's words are bounded by the request, every write counts
    /// against the key's and the client's rates (Keen's 429 past them), and nothing is stored from
    /// a refused batch.
    @Test(arguments: databases)
    func writesAreBoundedByEventsBytesAndRate(_ database: String?) async throws {
        try await AnalyticsServer.with(database: database) { server in
            let url = "\(server.address)/3.0/projects/\(server.project)/events"
            let write = server.keys["write_key"]!
            let before = Self.residentBytes(server.process.processIdentifier)

            // 10,000 bad events (2 MB): each fails alone, and the answer stays within a few times
            // the request.
            let bad = "{\"$" + String(repeating: "x", count: 180) + "\":1}"
            let invalid = Data(
                ("{\"views\":[" + Array(repeating: bad, count: 10_000).joined(separator: ",") + "]}").utf8)
            let answered = try await Self.send("POST", url, key: write, body: invalid)
            #expect(answered.status == 200)
            #expect(answered.body.count < invalid.count / 2, "answer \(answered.body.count) bytes for \(invalid.count)")
            let results = try #require(
                try JSONSerialization.jsonObject(with: answered.body) as? [String: [[String: Any]]])
            #expect(results["views"]?.count == 10_000)
            #expect(results["views"]?.allSatisfy { ($0["success"] as? Bool) == false } == true)

            // The client has spent its burst (10,000 events): another such batch waits (Keen's 429).
            let good = Data(("{\"views\":[" + Array(repeating: "{}", count: 10_000).joined(separator: ",") + "]}").utf8)
            let limited = try await Self.send("POST", url, key: write, body: good)
            #expect(limited.status == 429)
            #expect(Self.errorCode(limited.body) == "TooManyRequestsError")
            #expect(Int(limited.headers["retry-after"] ?? "") ?? 0 >= 1)

            // Nothing was stored from the refused batches.
            let count = try await Self.send(
                "GET",
                "\(server.address)/3.0/projects/\(server.project)/queries/count?event_collection=views",
                key: server.keys["read_key"]!)
            #expect(String(decoding: count.body, as: UTF8.self) == #"{"result":0}"#)

            let after = Self.residentBytes(server.process.processIdentifier)
            #expect(after - before < 200 * 1_048_576, "resident memory grew \((after - before) / 1_048_576) MB")
        }
    }

    /// A batch past the limit (2 MB of `{}`) is refused with nothing stored, and charged to its
    /// client all the same: it then waits (Keen's 429, with how long), and a large body it sends
    /// meanwhile is answered before it is read, the connection closed instead of read to its end
    /// (in the hostile benchmark such batches, parsed whole to be refused, were a fifth of the
    /// server's CPU). Failed on main at 3cd1bc6: the second batch was read and refused again.
    @Test(arguments: databases)
    func aBatchPastTheLimitIsChargedToItsClient(_ database: String?) async throws {
        try await AnalyticsServer.with(database: database) { server in
            let path = "/3.0/projects/\(server.project)/events"
            let write = server.keys["write_key"]!
            let empties = Data(
                ("{\"views\":[" + Array(repeating: "{}", count: 666_666).joined(separator: ",") + "]}").utf8)
            let refused = try await Self.send("POST", server.address + path, key: write, body: empties)
            #expect(refused.status == 413, "\(String(decoding: refused.body.prefix(300), as: UTF8.self))")
            #expect(Self.errorCode(refused.body) == "RequestEntityTooLargeError")

            let one = try await Self.send(
                "POST", server.address + path, key: write, body: Data(#"{"views":[{}]}"#.utf8))
            #expect(one.status == 429)
            #expect(Int(one.headers["retry-after"] ?? "") ?? 0 >= 30, "\(one.headers)")

            // Another 2 MB: the head and a first kilobyte sent, the answer comes and the
            // connection closes without the rest.
            let port = try #require(Int(server.address.split(separator: ":").last ?? ""))
            let head =
                "POST \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: \(write)\r\n"
                + "Content-Type: application/json\r\nContent-Length: \(empties.count)\r\n\r\n"
            let answer = try Self.exchange(port: port, send: Array(head.utf8) + Array(empties.prefix(1024)))
            #expect(answer.hasPrefix("HTTP/1.1 429"), "\(answer.prefix(200))")

            let count = try await Self.send(
                "GET", "\(server.address)/3.0/projects/\(server.project)/queries/count?event_collection=views",
                key: server.keys["read_key"]!)
            #expect(String(decoding: count.body, as: UTF8.self) == #"{"result":0}"#)
        }
    }

    /// Sends `bytes` to 127.0.0.1:`port` and reads until the server closes the connection (at most
    /// 30 s, else it throws): what the server answered.
    static func exchange(port: Int, send bytes: [UInt8]) throws -> String {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        try #require(connected == 0, "connect: errno \(errno)")
        let sent = bytes.withUnsafeBytes { Foundation.send(descriptor, $0.baseAddress, $0.count, 0) }
        try #require(sent == bytes.count)
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let read = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if read == 0 { break }
            try #require(read > 0, "no end of the connection within 30 s (errno \(errno)): \(answer.count) bytes read")
            answer += buffer[0..<read]
        }
        return String(decoding: answer, as: UTF8.self)
    }

    /// A property name or a uniqueness token with a NUL is refused at ingest, that event alone (it
    /// gave a 500 carrying the SQL statement on SQLite, and failed a whole batch on PostgreSQL).
    @Test(arguments: databases)
    func controlCharactersInNamesAreRefusedAlone(_ database: String?) async throws {
        try await AnalyticsServer.with(database: database) { server in
            let url = "\(server.address)/3.0/projects/\(server.project)/events"
            let body = Data(#"{"views":[{"a\u0000b":1},{"tab":"live"}]}"#.utf8)
            let answer = try await Self.send("POST", url, key: server.keys["write_key"]!, body: body)
            #expect(answer.status == 200)
            let text = String(decoding: answer.body, as: UTF8.self)
            #expect(text.contains("InvalidPropertyNameError"), "\(text)")
            #expect(text.contains(#"{"success":true}"#), "\(text)")
            #expect(!text.localizedCaseInsensitiveContains("insert"), "\(text)")
            // A NUL in a uniqueness token failed the whole batch with 500 on PostgreSQL (good
            // events lost); SQLite stored it. Now the event is refused alone on both.
            let tokens = Data(
                #"{"views":[{"tab":"a","keen":{"uniqueness_token":"a\u0000b"}},{"tab":"b","keen":{"uniqueness_token":"ok"}}]}"#
                    .utf8)
            let token = try await Self.send("POST", url, key: server.keys["write_key"]!, body: tokens)
            let said = String(decoding: token.body, as: UTF8.self)
            #expect(token.status == 200, "\(said)")
            #expect(said.contains("InvalidPropertyValueError") && said.contains("NUL"), "\(said)")
            #expect(said.contains(#"{"success":true}"#), "\(said)")
        }
    }

    /// Item 3: a `^(a+)+$` filter ran past 300 s; several of them stalled every SQLite read; a
    /// stopping server waited for them. Now the filter takes linear time, a query stops itself at
    /// its limit (Keen's 504) and the service's own reads stay quick beside it, and a graceful
    /// stop ends a running query at once.
    @Test(arguments: databases)
    func queriesStopAtTheirLimitAndNeverStallTheService(_ database: String?) async throws {
        try await AnalyticsServer.with(
            database: database, settings: ["analytics": ["query-seconds": 1, "concurrent-queries": 1]]
        ) { server in
            let base = "\(server.address)/3.0/projects/\(server.project)"
            let (write, read) = (server.keys["write_key"]!, server.keys["read_key"]!)
            // 300 events with 10,000-character texts (3 MB), and thirty a's and a b.
            let long = String(repeating: "a", count: 10_000)
            let events =
                Array(repeating: #"{"text":"\#(long)"}"#, count: 300) + [#"{"text":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaab"}"#]
            let stored = try await Self.send(
                "POST", "\(base)/events", key: write, body: Data(#"{"notes":[\#(events.joined(separator: ","))]}"#.utf8)
            )
            #expect(stored.status == 200)

            func query(_ pattern: String) async throws -> (status: Int, body: Data, seconds: Double) {
                let filters = #"[{"property_name":"text","operator":"regex","property_value":"\#(pattern)"}]"#
                let body = Data(#"{"event_collection":"notes","filters":\#(filters)}"#.utf8)
                let start = Date()
                let answer = try await Self.send("POST", "\(base)/queries/count", key: read, body: body)
                return (answer.status, answer.body, Date().timeIntervalSince(start))
            }
            // The evil pattern, in linear time: 300 events of 10,000 characters each.
            let evil = try await query("^(a+)+$")
            #expect(evil.status == 200 || evil.status == 504, "\(String(decoding: evil.body, as: UTF8.self))")
            if evil.status == 200 { #expect(String(decoding: evil.body, as: UTF8.self) == #"{"result":300}"#) }

            // A pattern with a thousand live states per character: far past one second.
            async let heavy = query("(a?){500}a{500}")
            async let waiting = query("(a?){500}a{500}")
            // Meanwhile the service answers: health, and a device registered and read.
            var slowest = 0.0
            var healthTimes: [Double] = []
            for _ in 0..<100 {
                let start = Date()
                let health = try await Self.send("GET", "\(server.address)/healthz", timeout: 5)
                #expect(health.status == 200)
                healthTimes.append(Date().timeIntervalSince(start))
                slowest = max(slowest, healthTimes.last!)
            }
            // The figure, printed (a time is the benchmarks' to hold to, not a test's).
            let sorted = healthTimes.sorted()
            print(
                String(
                    format: "/healthz beside two queries running to their time limit: %d requests, p50 %.1f ms, "
                        + "p99 %.1f ms, max %.1f ms", sorted.count, sorted[sorted.count / 2] * 1000,
                    sorted[Int((Double(sorted.count) * 0.99).rounded(.up)) - 1] * 1000, sorted.last! * 1000))
            let token = String(repeating: "ab", count: 32)
            let registration = Data(#"{"channel":"apns","token":"\#(token)","topic":"com.example.nohit"}"#.utf8)
            let start = Date()
            let device = try await Self.send("POST", "\(server.address)/api/devices", body: registration, timeout: 5)
            slowest = max(slowest, Date().timeIntervalSince(start))
            #expect(device.status == 201, "\(String(decoding: device.body, as: UTF8.self))")
            // Before query budgets these timed out (5 s) while two such queries ran; a loaded machine
            // (a full test run beside a build) may take a second, never three.
            #expect(slowest < 3, "the service took \(slowest) s to answer beside the queries")

            let (first, second) = try await (heavy, waiting)
            for answer in [first, second] {
                #expect(answer.status == 504, "\(String(decoding: answer.body, as: UTF8.self))")
                #expect(Self.errorCode(answer.body) == "QueryTimeoutError")
            }
            // Each stopped near its one second (the second waited for the first's turn).
            #expect(min(first.seconds, second.seconds) < 5)
        }
    }

    /// A graceful stop ends a running query at once (SIGTERM waited 50 s for regex queries).
    @Test func aStoppingServerStopsItsQueries() async throws {
        try await AnalyticsServer.with(settings: ["analytics": ["query-seconds": 300]]) { server in
            let base = "\(server.address)/3.0/projects/\(server.project)"
            let long = String(repeating: "a", count: 10_000)
            let events = Array(repeating: #"{"text":"\#(long)"}"#, count: 300)
            _ = try await Self.send(
                "POST", "\(base)/events", key: server.keys["write_key"]!,
                body: Data(#"{"notes":[\#(events.joined(separator: ","))]}"#.utf8))
            let filters = #"[{"property_name":"text","operator":"regex","property_value":"(a?){500}a{500}"}]"#
            let body = Data(#"{"event_collection":"notes","filters":\#(filters)}"#.utf8)
            let running = Task {
                try await Self.send("POST", "\(base)/queries/count", key: server.keys["read_key"]!, body: body)
            }
            // The query is running once the metrics say so.
            var seen = false
            for _ in 0..<100 where !seen {
                let metrics = try await Self.send("GET", "\(server.address)/metrics")
                seen = String(decoding: metrics.body, as: UTF8.self).contains(
                    #"nohit_analytics_queries{state="running"} 1"#)
                if !seen { try await Task.sleep(for: .milliseconds(100)) }
            }
            #expect(seen, "the query never showed as running")
            let start = Date()
            server.process.terminate()
            try await Executable.onThread { server.process.waitUntilExit() }
            // Well before the query's own limit (300 s, which it waited out before), however
            // starved the run.
            #expect(
                Date().timeIntervalSince(start) < 120, "the server took \(Date().timeIntervalSince(start)) s to stop")
            _ = try? await running.value
        }
    }
}
