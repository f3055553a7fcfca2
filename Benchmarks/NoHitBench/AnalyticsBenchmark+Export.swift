import Analytics
import AsyncHTTPClient
import Foundation
import NIOCore

/// `--export`: every event out over HTTP as NDJSON, the server's resident memory sampled as it
/// streams; then a second export dropped at 40% of its bytes (the connection closed mid-body)
/// and resumed after its last whole line: the two parts must hold every event once, in order.
extension AnalyticsBenchmark {
    struct ExportCheck {
        var lines = 0
        var previous: (timestamp: Int64, id: String)?
        var last: (timestamp: String, id: String)?
        var outOfOrder = 0
        var partial: [UInt8] = []

        /// Takes a chunk of the body: counts its whole lines and checks their (timestamp, id) order.
        mutating func take(_ buffer: ByteBuffer) {
            var bytes = partial
            bytes.append(contentsOf: buffer.readableBytesView)
            var start = 0
            while let newline = bytes[start...].firstIndex(of: 0x0A) {
                if let key = Self.key(bytes[start..<newline]) {
                    // Ids are 24 hex digits: their text order is their order.
                    let stamp = KeenTime.parse(key.timestamp) ?? .min
                    if let previous, (previous.timestamp, previous.id) >= (stamp, key.id) { outOfOrder += 1 }
                    previous = (stamp, key.id)
                    last = key
                }
                lines += 1
                start = newline + 1
            }
            partial = Array(bytes[start...])
        }

        /// The event's keen.timestamp and keen.id (the rebuilt event starts with its keen block).
        static func key(_ line: ArraySlice<UInt8>) -> (timestamp: String, id: String)? {
            let text = String(decoding: line.prefix(200), as: UTF8.self)
            func value(_ name: String) -> String? {
                guard let range = text.range(of: "\"\(name)\":\"") else { return nil }
                return String(text[range.upperBound...].prefix { $0 != "\"" })
            }
            guard let timestamp = value("timestamp"), let id = value("id") else { return nil }
            return (timestamp, id)
        }
    }

    static func measureExport(
        client: HTTPClient, base: String, masterKey: String, server: Process, events: Int
    ) async throws {
        func request(_ query: String) -> HTTPClientRequest {
            var request = HTTPClientRequest(url: base + "/events/views/export" + query)
            request.headers.add(name: "authorization", value: masterKey)
            return request
        }
        let pid = "\(server.processIdentifier)"
        let before = ProcessMemory.kilobytes("VmRSS", pid: pid)
        let anonymousBefore = ProcessMemory.kilobytes("RssAnon", pid: pid)
        var (peak, anonymousPeak) = (before, anonymousBefore)
        var check = ExportCheck()
        var bytes = 0
        let cpu = ProcessTimes.cpuSeconds(pid: server.processIdentifier)
        let start = ContinuousClock.now
        let response = try await client.execute(request(""), timeout: .seconds(3_600))
        var chunks = 0
        for try await buffer in response.body {
            bytes += buffer.readableBytes
            check.take(buffer)
            chunks += 1
            if chunks % 64 == 0 {
                peak = max(peak, ProcessMemory.kilobytes("VmRSS", pid: pid))
                anonymousPeak = max(anonymousPeak, ProcessMemory.kilobytes("RssAnon", pid: pid))
            }
        }
        let seconds = SSEBenchmark.seconds(ContinuousClock.now - start)
        let serverCPU = ProcessTimes.cpuSeconds(pid: server.processIdentifier) - cpu
        print(
            String(
                format: "export: GET …/events/views/export (NDJSON, master key): %d events (%d out of order) in "
                    + "%.1f s = %.0f events/s, %.0f MB; server CPU %.1f s = %.2f µs/event; server resident memory "
                    + "%.0f MB before, at most %.0f MB during; of it anonymous (the heap, not the database file "
                    + "SQLite maps) %.0f MB before, at most %.0f MB during (sampled every 64 chunks)",
                check.lines, check.outOfOrder, seconds, Double(check.lines) / seconds, Double(bytes) / 1e6,
                serverCPU, serverCPU / Double(max(1, check.lines)) * 1e6, Double(before) / 1024,
                Double(peak) / 1024, Double(anonymousBefore) / 1024, Double(anonymousPeak) / 1024))

        // Dropped at 40% of the bytes, then resumed after the last whole line.
        var cut = ExportCheck()
        var read = 0
        let dropped = try await client.execute(request(""), timeout: .seconds(3_600))
        for try await buffer in dropped.body {
            cut.take(buffer)
            read += buffer.readableBytes
            if read >= bytes * 2 / 5 { break }
        }
        guard let last = cut.last else { throw ExportError("the dropped export held no whole line") }
        let stamp = last.timestamp.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? last.timestamp
        let resumed = try await client.execute(
            request("?after_timestamp=\(stamp)&after_id=\(last.id)"), timeout: .seconds(3_600))
        var rest = ExportCheck()
        rest.previous = (KeenTime.parse(last.timestamp) ?? .min, last.id)
        for try await buffer in resumed.body { rest.take(buffer) }
        print(
            "export resumed: the first dropped at \(read) bytes after \(cut.lines) whole events (the connection closed), "
                + "resumed after keen.id \(last.id): \(rest.lines) more, \(cut.lines + rest.lines) in all of \(events) "
                + "(\(cut.outOfOrder + rest.outOfOrder) out of order or repeated) → "
                + (cut.lines + rest.lines == events && cut.outOfOrder + rest.outOfOrder == 0
                    ? "every event once" : "NOT every event once"))
    }

    struct ExportError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}
