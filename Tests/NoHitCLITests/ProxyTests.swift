import Foundation
import TestSupport
import Testing

/// `nohit serve --trusted-proxies 127.0.0.1` behind Debian's nginx running the shipped
/// `deploy/nginx/nohit.conf` (issue 58): clients on 127.0.0.2… reach nginx, nginx reaches the
/// service from 127.0.0.1 and appends the address it saw to `X-Forwarded-For`. Without the setting
/// every user was one client, and the 21st registration of a minute from all of them together got
/// 429.
@Suite(.serialized, .ownThreads) struct ProxyTests {
    static let nginx: String? = ["/usr/sbin/nginx", "/usr/bin/nginx"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    /// A free port on loopback (the kernel's pick, let go again for nginx to take).
    static func freePort() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0
            }
        }
        try #require(bound, "no free port: errno \(errno)")
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// nginx on 127.0.0.1:`port` (plain) and 127.0.0.1:`tls` (TLS, HTTP/2 and HTTP/1.1, with a test
    /// certificate for 127.0.0.1 made here, `root/ca.pem`) in front of the service on `upstream`,
    /// from the shipped files with only the ports and the certificate's paths changed; stopped when
    /// `body` returns.
    static func withNginx(
        port: Int, tls: Int, upstream: Int, in directory: URL, _ body: (_ certificate: String) async throws -> Void
    ) async throws {
        let shipped = try String(
            contentsOf: TestData.packageRoot.appendingPathComponent("deploy/nginx/nohit.conf"), encoding: .utf8)
        let snippet = try String(
            contentsOf: TestData.packageRoot.appendingPathComponent("deploy/nginx/snippets/nohit-proxy.conf"),
            encoding: .utf8)
        let lines = [
            "server 127.0.0.1:8080;", "listen 127.0.0.1:8443;", "listen 443 ssl http2;",
            "ssl_certificate     /etc/ssl/alerts.example.com/fullchain.pem;",
            "ssl_certificate_key /etc/ssl/alerts.example.com/privkey.pem;", "include snippets/nohit-proxy.conf;",
        ]
        try #require(lines.allSatisfy { shipped.contains($0) }, "the shipped nohit.conf changed its shape")
        let root = directory.appendingPathComponent("nginx")
        let certificate = root.appendingPathComponent("ca.pem").path
        let key = root.appendingPathComponent("key.pem").path
        let tlsPort = tls
        let site = shipped.replacingOccurrences(of: "server 127.0.0.1:8080;", with: "server 127.0.0.1:\(upstream);")
            .replacingOccurrences(of: "listen 127.0.0.1:8443;", with: "listen 127.0.0.1:\(port);")
            .replacingOccurrences(of: "listen 443 ssl http2;", with: "listen 127.0.0.1:\(tlsPort) ssl http2;")
            .replacingOccurrences(of: "/etc/ssl/alerts.example.com/fullchain.pem", with: certificate)
            .replacingOccurrences(of: "/etc/ssl/alerts.example.com/privkey.pem", with: key)
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        // Its workers may run as nobody: their temporary files go where anyone may write.
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: root.path)
        try site.write(to: root.appendingPathComponent("nohit.conf"), atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(
            at: root.appendingPathComponent("snippets"), withIntermediateDirectories: true)
        try snippet.write(
            to: root.appendingPathComponent("snippets/nohit-proxy.conf"), atomically: true, encoding: .utf8)
        // A self-signed certificate for 127.0.0.1, the one the clients then trust.
        let made = try Executable.run(
            "/usr/bin/openssl",
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1",
                "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", key, "-out",
                certificate,
            ])
        try #require(made.status == 0, "openssl: \(made.standardError)")
        let main = """
            worker_processes 1;
            daemon off;
            pid \(root.path)/nginx.pid;
            error_log \(root.path)/error.log;
            events { worker_connections 1024; }
            http {
                access_log off;
                client_body_temp_path \(root.path)/body;
                proxy_temp_path \(root.path)/proxy;
                fastcgi_temp_path \(root.path)/fastcgi;
                uwsgi_temp_path \(root.path)/uwsgi;
                scgi_temp_path \(root.path)/scgi;
                include \(root.path)/nohit.conf;
            }
            """
        try main.write(to: root.appendingPathComponent("nginx.conf"), atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(nginx))
        process.arguments = [
            "-p", root.path, "-e", root.appendingPathComponent("error.log").path, "-c",
            root.appendingPathComponent("nginx.conf").path,
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer {
            process.terminate()
            process.waitUntilExit()
        }
        // Ready when it accepts (or gone, with its log saying why).
        let deadline = ContinuousClock.now + .seconds(30)
        func accepts(_ port: Int) -> Bool {
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            defer { close(descriptor) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            return withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
                }
            }
        }
        while true {
            if accepts(port) && accepts(tlsPort) { break }
            let log = (try? String(contentsOf: root.appendingPathComponent("error.log"), encoding: .utf8)) ?? ""
            try #require(process.isRunning && ContinuousClock.now < deadline, "nginx did not start: \(log)")
            try await Task.sleep(for: .milliseconds(20))
        }
        try await body(certificate)
    }

    /// One request from `source` to 127.0.0.1:`port`, on its own connection: the status and body.
    static func request(
        port: Int, from source: String, _ method: String, _ path: String, headers: [String] = [], body: String = ""
    ) async throws -> (status: Int, body: String) {
        try await Executable.onThread {
            let descriptor = try SlowBodyTests.connect(port: port, from: source)
            defer { close(descriptor) }
            let head =
                [
                    "\(method) \(path) HTTP/1.1", "Host: 127.0.0.1", "Connection: close",
                    "Content-Type: application/json", "Content-Length: \(body.utf8.count)",
                ] + headers
            SlowBodyTests.send(descriptor, head.joined(separator: "\r\n") + "\r\n\r\n" + body)
            let answer = try #require(SlowBodyTests.readToClose(descriptor), "no answer to \(method) \(path)")
            let status = answer.split(separator: " ", maxSplits: 2).dropFirst().first.flatMap { Int($0) } ?? 0
            let content = answer.range(of: "\r\n\r\n").map { String(answer[$0.upperBound...]) } ?? ""
            return (status, content)
        }
    }

    /// `nohit serve` (the bundled day at 600x, trusting 127.0.0.1 as its proxy, `registrationsPerMinute`
    /// per client) behind the shipped nginx: `body` gets the service's port, nginx's plain and TLS
    /// ports, and the certificate clients trust.
    static func behindNginx(
        registrationsPerMinute: Int,
        _ body: (_ upstream: Int, _ port: Int, _ tls: Int, _ certificate: String) async throws -> Void
    ) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("proxy-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let (server, address) = try Executable.start(
            "nohit",
            [
                "serve", "--replay", "2020-08-25", "--speed", "600", "--port", "0", "--data",
                TestData.packageRoot.appendingPathComponent("Data/retrosheet").path, "--data-dir", directory.path,
                "--trusted-proxies", "127.0.0.1", "--registrations-per-minute", "\(registrationsPerMinute)",
            ])
        defer {
            server.terminate()
            server.waitUntilExit()
        }
        let upstream = try #require(Int(address.split(separator: ":").last ?? ""), "no address: \(address)")
        let port = try freePort()
        let tls = try freePort()
        try await withNginx(port: port, tls: tls, upstream: upstream, in: directory) { certificate in
            try await body(upstream, port, tls, certificate)
        }
    }

    static func registration(_ number: Int) -> String {
        let token = String(format: "%064x", number)
        return #"{"channel":"apns","token":"\#(token)","topic":"com.example.nohit"}"#
    }

    @Test(.enabled(if: nginx != nil, "needs nginx (apt-get install -y nginx); .ci/run installs it"))
    func clientsBehindNginxAreEachTheirOwn() async throws {
        // 1 a minute (2 at once): the 429s below hold however slow a loaded machine is between
        // two requests, unless a minute passes (at 5 a minute, 12 s brought a token back).
        try await Self.behindNginx(registrationsPerMinute: 1) { upstream, port, _, _ in
            // 200 users, each from its own address, register: none is held back by the others.
            var number = 0
            for user in 2...201 {
                number += 1
                let answer = try await Self.request(
                    port: port, from: "127.0.0.\(user)", "POST", "/api/devices", body: Self.registration(number))
                #expect(answer.status == 201, "user 127.0.0.\(user): \(answer.status) \(answer.body)")
            }
            // One of them goes on past its allowance: 429 for it alone.
            var statuses: [Int] = []
            for _ in 0..<16 {
                number += 1
                statuses.append(
                    try await Self.request(
                        port: port, from: "127.0.0.2", "POST", "/api/devices", body: Self.registration(number)
                    ).status)
            }
            #expect(statuses.contains(429), "\(statuses)")
            number += 1
            let neighbour = try await Self.request(
                port: port, from: "127.0.0.3", "POST", "/api/devices", body: Self.registration(number))
            #expect(neighbour.status == 201, "the neighbour: \(neighbour)")
            // Claiming another address through nginx changes nothing: nginx appends the one it saw.
            number += 1
            let claimed = try await Self.request(
                port: port, from: "127.0.0.2", "POST", "/api/devices", headers: ["X-Forwarded-For: 198.51.100.7"],
                body: Self.registration(number))
            #expect(claimed.status == 429, "\(claimed)")
            // Straight to the service from a peer that is not the proxy, the header is ignored:
            // a new claimed address each time is still one client.
            var direct: [Int] = []
            for index in 0..<12 {
                number += 1
                direct.append(
                    try await Self.request(
                        port: upstream, from: "127.0.0.240", "POST", "/api/devices",
                        headers: ["X-Forwarded-For: 198.51.100.\(index + 1)"], body: Self.registration(number)
                    ).status)
            }
            #expect(direct.contains(429), "\(direct)")
            try await Self.streamIsOnTime(direct: upstream, proxied: port)
        }
    }

    /// The shipped TLS server: HTTP/2 and HTTP/1.1 over TLS (a test certificate for 127.0.0.1),
    /// the live stream's events coming through HTTP/2 as they happen, and the client counted as
    /// itself (curl from 127.0.0.5 registers; nginx tells the service so).
    @Test(.enabled(if: nginx != nil && curl != nil, "needs nginx and curl (.ci/run installs nginx)"))
    func tlsAndHTTP2PassThroughNginx() async throws {
        try await Self.behindNginx(registrationsPerMinute: 1) { _, _, tls, ca in
            func curl(_ arguments: [String]) async throws -> Executable.Output {
                try await Executable.onThread {
                    try Executable.run(try #require(Self.curl), ["-sS", "--cacert", ca] + arguments)
                }
            }
            let base = "https://127.0.0.1:\(tls)"
            for (version, expected) in [("--http2", "2 200"), ("--http1.1", "1.1 200")] {
                let answer = try await curl([
                    version, "-o", "/dev/null", "-w", "%{http_version} %{http_code}", base + "/healthz",
                ])
                #expect(
                    answer.standardOutput == expected, "\(version): \(answer.standardOutput) \(answer.standardError)")
            }
            // Two clients, each its own over TLS: the service's limit of 1 a minute (2 at once)
            // holds back each alone.
            var statuses: [String: [String]] = [:]
            // (Five from the first: a loaded machine once let a minute pass between two of three.)
            for (index, source) in ["127.0.0.5", "127.0.0.5", "127.0.0.5", "127.0.0.5", "127.0.0.5", "127.0.0.6"]
                .enumerated()
            {
                let answer = try await curl([
                    "--http2", "--interface", source, "-o", "/dev/null", "-w", "%{http_code}", "-H",
                    "Content-Type: application/json", "--data", Self.registration(9000 + index), base + "/api/devices",
                ])
                statuses[source, default: []].append(answer.standardOutput)
            }
            #expect(statuses["127.0.0.5"]?.prefix(2) == ["201", "201"], "\(statuses)")
            #expect(statuses["127.0.0.5"]?.contains("429") == true, "\(statuses)")
            #expect(statuses["127.0.0.6"] == ["201"], "\(statuses)")
            // The live stream over HTTP/2: events come while the connection stays open.
            let stream = try await curl([
                "--http2", "-N", "--max-time", "8", "-H", "Accept: text/event-stream", base + "/api/stream",
            ])
            let ids = stream.standardOutput.split(separator: "\n").filter { $0.hasPrefix("id:") }
            #expect(ids.count >= 3, "events over HTTP/2 through nginx in 8 s: \(ids.count)")
        }
    }

    static let curl: String? = ["/usr/bin/curl", "/bin/curl"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// The live stream through nginx: each event arrives when it does straight from the service.
    static func streamIsOnTime(direct: Int, proxied: Int) async throws {
        async let straight = Self.events(port: direct, from: "127.0.0.250")
        async let through = Self.events(port: proxied, from: "127.0.0.251")
        let (a, b) = try await (straight, through)
        // Only events sent after both had connected (each stream's first event is the state then).
        let both = max(a.first?.at ?? .now, b.first?.at ?? .now)
        let later = Dictionary(b.map { ($0.id, $0.at) }, uniquingKeysWith: { first, _ in first })
        var compared = 0
        for event in a where event.at > both + .milliseconds(200) {
            guard let seen = later[event.id] else { continue }
            compared += 1
            #expect(seen - event.at < .seconds(2), "event \(event.id): \(seen - event.at) later through nginx")
        }
        #expect(compared >= 3, "events compared: \(compared) (direct \(a.count), through nginx \(b.count))")
    }

    /// The ids of the live stream's events from `port` with when each came, over 20 s.
    static func events(port: Int, from source: String) async throws -> [(id: String, at: ContinuousClock.Instant)] {
        try await Executable.onThread {
            let descriptor = try SlowBodyTests.connect(port: port, from: source)
            defer { close(descriptor) }
            var timeout = timeval(tv_sec: 1, tv_usec: 0)
            setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            SlowBodyTests.send(
                descriptor, "GET /api/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
            var events: [(id: String, at: ContinuousClock.Instant)] = []
            var pending = ""
            var buffer = [UInt8](repeating: 0, count: 65_536)
            let end = ContinuousClock.now + .seconds(20)
            while ContinuousClock.now < end {
                let read = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
                if read == 0 { break }
                guard read > 0 else { continue }
                let now = ContinuousClock.now
                pending += String(decoding: buffer[0..<read], as: UTF8.self)
                while let newline = pending.firstIndex(of: "\n") {
                    let line = pending[..<newline]
                    if line.hasPrefix("id:") {
                        events.append((line.dropFirst(3).trimmingCharacters(in: .whitespaces), now))
                    }
                    pending = String(pending[pending.index(after: newline)...])
                }
            }
            return events
        }
    }
}
