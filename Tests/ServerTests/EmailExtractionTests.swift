import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import JSON
import NIOCore
import TestSupport
import Testing

@testable import Server

/// Keen's extraction with `email`: no mail server here, so the file is written on the server and
/// the answer says where. Every event that passes, across pages, no cap; the columns asked for; the
/// key's own filters kept; bad addresses and combinations named.
@Suite struct EmailExtractionTests {
    static func post(_ client: some TestClientProtocol, _ analysis: String, _ body: String, key: String) async throws
        -> (HTTPResponse.Status, JSONValue)
    {
        try await client.execute(
            uri: "/3.0/projects/app/queries/\(analysis)", method: .post,
            headers: [.authorization: key, .contentType: "application/json"], body: ByteBuffer(string: body)
        ) { response in
            (response.status, try JSONValue.parse(Array(String(buffer: response.body).utf8)))
        }
    }

    @Test func theFileHoldsEveryEventThatPassesAndTheAnswerSaysWhere() async throws {
        let seed = TestSeed.draw()
        print("email extraction test: events drawn with seed \(seed)")
        let fixture = try await CachedQueryTests.Fixture()
        defer { fixture.remove() }
        try await ExportTests.record(fixture, seed: seed)
        var api = fixture.api
        let folder = fixture.directory + "/extractions"
        api.extractions = folder
        let read = fixture.project.readKey
        let master = fixture.project.masterKey
        let router = Router(context: APIRequestContext.self)
        api.add(to: router)
        try await Application(router: router).test(.router) { client in
            // Every event, more than two pages, one column asked for.
            let (status, answer) = try await Self.post(
                client, "extraction",
                #"{"event_collection":"views","email":"fan@example.com","property_names":["i"]}"#, key: master)
            #expect(status == .ok, "\(answer.jsonText.prefix(300))")
            let file = try #require(answer["file"]?.string)
            #expect(file.hasPrefix(folder + "/app/") && file.hasSuffix(".csv"))
            #expect(answer["events"]?.number == Double(ExportTests.count))
            #expect(answer["result"]?.string?.contains("Written to \(file)") == true)
            #expect(answer["result"]?.string?.contains("fan@example.com") == true)
            let lines = try String(contentsOfFile: file, encoding: .utf8).split(separator: "\r\n").map(String.init)
            #expect(lines.first == "keen.timestamp,keen.created_at,keen.id,i")
            let indices = lines.dropFirst().compactMap { $0.split(separator: ",").last.flatMap { Int($0) } }
            #expect(indices.count == ExportTests.count && Set(indices) == Set(0..<ExportTests.count), "seed \(seed)")
            // No file is left half-written beside it.
            let names = try FileManager.default.contentsOfDirectory(atPath: folder + "/app")
            #expect(names == [URL(fileURLWithPath: file).lastPathComponent])

            // Filtered: as many as the same filter counts.
            let filter = #"[{"property_name":"tab","operator":"eq","property_value":"scores"}]"#
            let (_, counted) = try await Self.post(
                client, "count", #"{"event_collection":"views","filters":\#(filter)}"#, key: read)
            let (filteredStatus, filtered) = try await Self.post(
                client, "extraction",
                #"{"event_collection":"views","email":"fan@example.com","filters":\#(filter),"property_names":["tab","i"]}"#,
                key: master)
            #expect(filteredStatus == .ok)
            #expect(filtered["events"]?.number == counted["result"]?.number)
            let rows = try String(contentsOfFile: try #require(filtered["file"]?.string), encoding: .utf8)
                .split(separator: "\r\n").dropFirst()
            #expect(rows.count == Int(counted["result"]?.number ?? -1))
            #expect(rows.allSatisfy { $0.hasSuffix(",scores") || $0.contains(",scores,") })
            // The export takes the same filters (master key).
            let encoded = try #require(filter.addingPercentEncoding(withAllowedCharacters: .alphanumerics))
            let (exportStatus, exported, _) = try await ExportTests.get(
                client, "/3.0/projects/app/events/views/export?filters=\(encoded)", key: fixture.project.masterKey)
            #expect(exportStatus == .ok)
            #expect(exported.split(separator: "\n").count == rows.count)

            // Refused, each naming what is wrong.
            for (analysis, body, words) in [
                ("extraction", #"{"event_collection":"views","email":"nobody"}"#, "must be an email address"),
                ("extraction", #"{"event_collection":"views","email":"a@b.c","latest":5}"#, "latest"),
                ("count", #"{"event_collection":"views","email":"a@b.c"}"#, "for an extraction only"),
                ("extraction", #"{"event_collection":"nothing","email":"a@b.c"}"#, "no event collection 'nothing'"),
            ] {
                let (status, answer) = try await Self.post(client, analysis, body, key: master)
                #expect(status.code >= 400 && status.code < 500, "\(body)")
                #expect(answer["message"]?.string?.contains(words) == true, "\(body): \(answer.jsonText)")
            }
        }
        // A file on the server is the master key's to ask for: a read key is refused.
        let router3 = Router(context: APIRequestContext.self)
        api.add(to: router3)
        try await Application(router: router3).test(.router) { client in
            let (status, _) = try await Self.post(
                client, "extraction", #"{"event_collection":"views","email":"fan@example.com"}"#, key: read)
            #expect(status == .unauthorized || status == .forbidden, "\(status)")
        }
        // A server with nowhere to write them says so.
        let router2 = Router(context: APIRequestContext.self)
        fixture.api.add(to: router2)
        try await Application(router: router2).test(.router) { client in
            let (status, answer) = try await Self.post(
                client, "extraction", #"{"event_collection":"views","email":"fan@example.com"}"#, key: master)
            #expect(status == .badRequest)
            #expect(answer["message"]?.string?.contains("writes no extraction files") == true)
        }
    }
}
