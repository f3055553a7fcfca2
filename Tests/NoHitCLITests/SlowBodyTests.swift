import Foundation
import TestSupport
import Testing

/// Request bodies that come slowly, against a real `nohit serve` (issue 57, item 4): a body's
/// declared `Content-Length` reserved the bytes every Keen write shares (two connections declaring
/// 8 MB and trickling a byte made every write 503 for as long as they trickled), and a request in
/// progress made its connection immune to every limit (10,000 POSTs trickling a byte every 15 s
/// were never closed). Now a body holds what has come, within its client's share, and one that
/// falls behind its pace is closed.
@Suite(.serialized, .ownThreads) struct SlowBodyTests {
    /// A blocking socket to 127.0.0.1:`port` from `source`, that gives up reading after 300 s (a
    /// bound for a server that never answers: a starved run can be a minute late).
    static func connect(port: Int, from source: String) throws -> Int32 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(descriptor >= 0)
        var timeout = timeval(tv_sec: 300, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        func address(_ ip: String, _ port: Int) -> sockaddr_in {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr(ip)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            return address
        }
        var local = address(source, 0)
        var remote = address("127.0.0.1", port)
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        try #require(bound == 0, "bind \(source): errno \(errno)")
        let connected = withUnsafePointer(to: &remote) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Foundation.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        try #require(connected == 0, "connect: errno \(errno)")
        return descriptor
    }

    static func send(_ descriptor: Int32, _ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { Foundation.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Reads until the server closes the connection (what it answered, if anything), or nil if it
    /// is still open after 30 s.
    static func readToClose(_ descriptor: Int32) -> String? {
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let read = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if read == 0 || (read < 0 && errno == ECONNRESET) { return String(decoding: answer, as: UTF8.self) }
            if read < 0 { return nil }
            answer += buffer[0..<read]
        }
    }

    @Test func aTrickledBodyHoldsWhatCameAndIsClosedBehindItsPace() async throws {
        // The idle timeout an hour off: only the pace closes the tricklers.
        try await AnalyticsServer.with(settings: ["http": ["body-timeout": 2, "idle-timeout": 3600]]) { server in
            let port = try #require(Int(server.address.split(separator: ":").last ?? ""))
            let path = "/3.0/projects/\(server.project)/events"
            let write = server.keys["write_key"]!
            // Two connections from one address declare 8 MB each (16 MB: every body's allowance)
            // and send one byte.
            let started = ContinuousClock.now
            let tricklers = try (0..<2).map { _ in try Self.connect(port: port, from: "127.0.0.2") }
            defer { for descriptor in tricklers { close(descriptor) } }
            for descriptor in tricklers {
                Self.send(
                    descriptor,
                    "POST \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: \(write)\r\n"
                        + "Content-Type: application/json\r\nContent-Length: 8000000\r\n\r\n{")
            }
            // Everyone else's writes go on meanwhile.
            for index in 0..<5 {
                let answer = try await HostileAnalyticsTests.send(
                    "POST", server.address + path, key: write, body: Data(#"{"views":[{"n":\#(index)}]}"#.utf8))
                #expect(answer.status == 200, "\(String(decoding: answer.body, as: UTF8.self))")
            }
            // And the tricklers are closed once they are behind the pace (1 KB a second after 2 s),
            // not at the idle timeout (an hour here) nor never.
            for descriptor in tricklers {
                let answer = Self.readToClose(descriptor)
                #expect(answer != nil, "a trickled body's connection still open after 300 s")
            }
            #expect(ContinuousClock.now - started < .seconds(1800))
            let count = try await HostileAnalyticsTests.send(
                "GET", "\(server.address)/3.0/projects/\(server.project)/queries/count?event_collection=views",
                key: server.keys["read_key"]!)
            #expect(String(decoding: count.body, as: UTF8.self) == #"{"result":5}"#)
        }
    }
}
