import Analytics
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import JSON
import NIOCore
import TestSupport
import Testing

@testable import Server

/// A collection's events out (`GET …/events/{collection}/export`): every event once, in
/// `(timestamp, id)` order, across pages (events sharing a timestamp straddle them), as NDJSON and
/// as CSV; a download cut at any event and resumed after it gives the rest, nothing missing or
/// doubled; the master key alone; bad parameters named.
@Suite struct ExportTests {
    static let count = 5_000

    /// Events "i" = 0..<count: timestamps in runs of up to 7 equal ones, strings with commas,
    /// quotes and line breaks, numbers, booleans, lists, a nested property, some missing.
    static func record(_ fixture: CachedQueryTests.Fixture, seed: UInt64) async throws {
        var random = SplitMix(seed: seed)
        let start = fixture.api.now() - 10 * 86_400_000_000
        var time = start
        var events: [IncomingEvent] = []
        for index in 0..<count {
            if random.next() % 4 == 0 { time += Int64(random.next() % 60_000_000) + 1 }
            var object = JSONObject()
            object["i"] = .number(Double(index))
            object["keen"] = ["timestamp": .string(KeenTime.format(time))]
            switch random.next() % 5 {
            case 0: object["tab"] = .string("live, \"now\"")
            case 1: object["tab"] = .string("line\nbreak")
            case 2: break
            default: object["tab"] = .string("scores")
            }
            if random.next() % 3 == 0 { object["flag"] = .bool(random.next() % 2 == 0) }
            if random.next() % 7 == 0 { object["list"] = [1, "two"] }
            // A name of its own that no export mistakes for anything else.
            if index % 5 == 0 { object["?"] = .number(Double(index)) }
            object["device"] = ["os": .string(random.next() % 2 == 0 ? "18.1" : "26.0")]
            events.append(try KeenEventRules.normalize(.object(object), now: fixture.api.now()))
        }
        for batch in stride(from: 0, to: count, by: 1_000) {
            _ = try await fixture.store.record(
                project: "app", batch: [("views", Array(events[batch..<batch + 1_000]))], createdAt: fixture.api.now())
        }
    }

    static func get(_ client: some TestClientProtocol, _ uri: String, key: String) async throws -> (
        HTTPResponse.Status, String, HTTPFields
    ) {
        try await client.execute(uri: uri, method: .get, headers: [.authorization: key]) { response in
            (response.status, String(buffer: response.body), response.headers)
        }
    }

    @Test func everyEventOnceInOrderAndResumedAfterAnyEvent() async throws {
        let seed = TestSeed.draw()
        print("export test: events and cut points drawn with seed \(seed)")
        let fixture = try await CachedQueryTests.Fixture()
        defer { fixture.remove() }
        try await Self.record(fixture, seed: seed)
        let master = fixture.project.masterKey
        let router = Router(context: APIRequestContext.self)
        fixture.api.add(to: router)
        try await Application(router: router).test(.router) { client in
            let (status, body, headers) = try await Self.get(
                client, "/3.0/projects/app/events/views/export", key: master)
            #expect(status == .ok, "\(body.prefix(300))")
            #expect(headers[.contentType] == "application/x-ndjson")
            let lines = body.split(separator: "\n").map(String.init)
            #expect(lines.count == Self.count, "seed \(seed)")
            let events = try lines.map { try JSONValue.parse(Array($0.utf8)) }
            let indices = events.compactMap { $0["i"]?.number.map(Int.init) }
            #expect(Set(indices) == Set(0..<Self.count), "seed \(seed): every event once")
            let keys = try events.map { event -> (Int64, String) in
                let stamp = try #require(event["keen"]?["timestamp"]?.string.flatMap(KeenTime.parse))
                return (stamp, try #require(event["keen"]?["id"]?.string))
            }
            #expect(zip(keys, keys.dropFirst()).allSatisfy { $0 < $1 }, "seed \(seed): in (timestamp, id) order")

            // Cut after any event (some inside a run of equal timestamps, one at a page's end) and
            // resumed: the rest, exactly.
            var random = SplitMix(seed: seed &+ 1)
            for cut in [0, ExportTests.count - 1, EventExport.pageSize - 1]
                + (0..<4).map({ _ in Int(random.next() % UInt64(Self.count)) })
            {
                let (stamp, id) = (events[cut]["keen"]!["timestamp"]!.string!, events[cut]["keen"]!["id"]!.string!)
                let query =
                    "after_timestamp=\(stamp.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)&after_id=\(id)"
                let (status, rest, _) = try await Self.get(
                    client, "/3.0/projects/app/events/views/export?\(query)", key: master)
                #expect(status == .ok)
                #expect(
                    rest.split(separator: "\n").map(String.init) == Array(lines[(cut + 1)...]),
                    "seed \(seed): resumed after event \(cut)")
            }

            // CSV: the keen columns, then each property path once; fields quoted as RFC 4180 says.
            let (csvStatus, csv, csvHeaders) = try await Self.get(
                client, "/3.0/projects/app/events/views/export?format=csv", key: master)
            #expect(csvStatus == .ok && csvHeaders[.contentType] == "text/csv; charset=utf-8")
            #expect(csv.hasPrefix("keen.timestamp,keen.created_at,keen.id,?,device.os,flag,i,list,tab\r\n"))
            #expect(csv.components(separatedBy: "\r\n").count == Self.count + 2, "a header, the rows, an empty end")
            #expect(csv.contains(#","live, ""now"""\#r\#n"#) && csv.contains("\"line\nbreak\"\r\n"))
            #expect(csv.contains(#","[1,""two""]","#))
            // Resumed, the CSV goes on without its header: the file it continues has it.
            let rows = csv.components(separatedBy: "\r\n")
            let cutRow = Self.count / 3
            let (cutStamp, cutID) = (keys[cutRow].0, keys[cutRow].1)
            let (_, csvRest, _) = try await Self.get(
                client,
                "/3.0/projects/app/events/views/export?format=csv&after_timestamp=\(KeenTime.format(cutStamp).addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)&after_id=\(cutID)",
                key: master)
            #expect(csvRest == rows[(cutRow + 2)...].joined(separator: "\r\n"), "seed \(seed)")

            // A timeframe narrows it as in a query.
            let middle = keys[Self.count / 2].0
            let timeframe = #"{"start":"\#(KeenTime.format(middle))","end":"2100-01-01T00:00:00Z"}"#
            let (_, narrowed, _) = try await Self.get(
                client,
                "/3.0/projects/app/events/views/export?timeframe=\(timeframe.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)",
                key: master)
            #expect(narrowed.split(separator: "\n").count == keys.filter { $0.0 >= middle }.count)

            // The master key alone; bad parameters said.
            let (readStatus, _, _) = try await Self.get(
                client, "/3.0/projects/app/events/views/export", key: fixture.project.readKey)
            #expect(readStatus.code == 401 || readStatus.code == 403)
            for (query, named) in [
                ("format=xml", "format"), ("after_id=00000000000000000000000a", "after_timestamp"),
                ("after_timestamp=2026-01-01T00:00:00Z&after_id=zz", "after_id"),
                ("after_timestamp=yesterday&after_id=00000000000000000000000a", "after_timestamp"),
            ] {
                let (status, message, _) = try await Self.get(
                    client, "/3.0/projects/app/events/views/export?\(query)", key: master)
                #expect(status == .badRequest && message.contains(named), "\(query): \(message)")
            }
            let (missing, _, _) = try await Self.get(client, "/3.0/projects/app/events/nothing/export", key: master)
            #expect(missing == .notFound)
        }
    }
}
