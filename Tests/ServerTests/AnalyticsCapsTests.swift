import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

@testable import Server

/// What one project may hold (issue 57, item 4): saved queries (3,000 were made in 12 s) and
/// datasets up to their caps, and no dataset whose buckets pass Keen's 2,500 intervals (one was
/// accepted, then failed at every refresh after).
@Suite struct AnalyticsCapsTests {
    @Test func savedQueriesAndDatasetsStopAtTheirCapsAndADatasetPastTheIntervalsIsRefused() async throws {
        var limits = AnalyticsLimits()
        limits.savedQueriesPerProject = 3
        limits.datasetsPerProject = 2
        let fixture = try await CachedQueryTests.Fixture(limits: limits)
        defer { fixture.remove() }
        let master = fixture.project.masterKey
        let router = Router(context: APIRequestContext.self)
        fixture.api.add(to: router)
        try await Application(router: router).test(.router) { client in
            func put(_ path: String, _ body: String) async throws -> (HTTPResponse.Status, String) {
                try await client.execute(
                    uri: "/3.0/projects/app/\(path)", method: .put, headers: [.authorization: master],
                    body: ByteBuffer(string: body)
                ) { response in (response.status, String(buffer: response.body)) }
            }
            let query =
                #"{"query": {"analysis_type": "count", "event_collection": "views", "timeframe": "this_1_days"}}"#
            for index in 0..<3 {
                #expect(try await put("queries/saved/q\(index)", query).0 == .created)
            }
            let fourth = try await put("queries/saved/q3", query)
            #expect(fourth.0 == .badRequest)
            #expect(fourth.1.contains("holds its 3 saved queries"), "\(fourth.1)")
            // One already held may still be replaced.
            #expect(try await put("queries/saved/q0", query).0 == .ok)

            func dataset(_ timeframe: String, _ interval: String) -> String {
                #"{"display_name": "d", "index_by": "tab", "query": {"analysis_type": "count", "event_collection": "views", "timeframe": "\#(timeframe)", "interval": "\#(interval)"}}"#
            }
            let tooMany = try await put("datasets/minutes", dataset("this_7_days", "minutely"))
            #expect(tooMany.0 == .badRequest, "\(tooMany.1)")
            #expect(tooMany.1.contains("more than 2500 intervals"), "\(tooMany.1)")
            #expect(try await put("datasets/d0", dataset("this_7_days", "daily")).0 == .created)
            #expect(try await put("datasets/d1", dataset("this_7_days", "hourly")).0 == .created)
            let third = try await put("datasets/d2", dataset("this_7_days", "daily"))
            #expect(third.0 == .badRequest)
            #expect(third.1.contains("holds its 2 datasets"), "\(third.1)")
        }
    }
}
