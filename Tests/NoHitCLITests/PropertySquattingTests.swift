import Foundation
import TestSupport
import Testing

/// Property squatting through the public write key (issue 57, item 4): 2,000,000 new property
/// names in 66 s grew the schema without bound (RSS 81 to 478 MB, writers stalled for seconds,
/// 969 MB after a restart). A collection now holds a bounded number of names and a project a
/// bounded number of collections, charged before the write: past them an event bringing a new one
/// is refused alone, while events with names already held go on being stored.
@Suite(.serialized, .ownThreads) struct PropertySquattingTests {
    static func post(_ server: AnalyticsServer, _ batch: String) async throws -> [String: [[String: Any]]] {
        let answer = try await HostileAnalyticsTests.send(
            "POST", "\(server.address)/3.0/projects/\(server.project)/events", key: server.keys["write_key"]!,
            body: Data(batch.utf8))
        #expect(answer.status == 200, "\(String(decoding: answer.body, as: UTF8.self))")
        return try #require(try JSONSerialization.jsonObject(with: answer.body) as? [String: [[String: Any]]])
    }

    @Test(arguments: HostileAnalyticsTests.databases)
    func newNamesPastTheBoundAreRefusedAloneKnownOnesStored(_ database: String?) async throws {
        try await AnalyticsServer.with(
            database: database,
            settings: ["analytics": ["properties-per-collection": 20, "collections-per-project": 3]]
        ) { server in
            // Five new names an event, until the collection's 20 are taken.
            var refusedAt: Int?
            for round in 0..<10 {
                let names = (0..<5).map { #""p\#(round)_\#($0)":1"# }.joined(separator: ",")
                let answer = try await Self.post(server, #"{"views":[{\#(names)}]}"#)
                let entry = try #require(answer["views"]?.first)
                if entry["success"] as? Bool == false {
                    let error = try #require(entry["error"] as? [String: Any])
                    #expect(error["name"] as? String == "InvalidPropertyNameError")
                    #expect((error["description"] as? String ?? "").contains("20 property names"), "\(error)")
                    refusedAt = refusedAt ?? round
                }
            }
            #expect(
                refusedAt != nil && refusedAt! <= 4,
                "never refused, or refused too early: \(String(describing: refusedAt))")
            // An event with names the collection holds is stored, beside a refused one in the
            // same batch; and the schema holds no more than its bound.
            let mixed = try await Self.post(server, #"{"views":[{"p0_1":2},{"brand_new":1}],"taps":[{"x":1}]}"#)
            #expect(mixed["views"]?[0]["success"] as? Bool == true)
            #expect(mixed["views"]?[1]["success"] as? Bool == false)
            #expect(mixed["taps"]?[0]["success"] as? Bool == true)
            let schema = try await HostileAnalyticsTests.send(
                "GET", "\(server.address)/3.0/projects/\(server.project)/events/views", key: server.keys["master_key"]!)
            let properties =
                try #require(
                    try JSONSerialization.jsonObject(with: schema.body) as? [String: Any])["properties"]
                as? [String: Any]
            #expect((properties?.count ?? 99) <= 20, "\(properties ?? [:])")
            // A project's collections are bounded too (3 here: views, taps, and one more).
            let collections = try await Self.post(server, #"{"c3":[{"x":1}],"c4":[{"x":1}]}"#)
            #expect(collections["c3"]?[0]["success"] as? Bool == true)
            let refused = try #require(collections["c4"]?[0])
            #expect(refused["success"] as? Bool == false)
            #expect((refused["error"] as? [String: Any])?["name"] as? String == "InvalidCollectionNameError")
            let count = try await HostileAnalyticsTests.send(
                "GET", "\(server.address)/3.0/projects/\(server.project)/queries/count?event_collection=views",
                key: server.keys["read_key"]!)
            #expect(String(decoding: count.body, as: UTF8.self) == #"{"result":\#((refusedAt ?? 0) + 1)}"#)
        }
    }
}
