import Foundation
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The requests Keen's iOS client (KeenClient-iOS 3.7.0) and keen-tracking-js send, byte for byte
/// as their sources make them (../shared/docs/KEEN.md), replayed against a real `nohit serve`: the
/// answers are what those clients read.
@Suite(.ownThreads) struct KeenSDKRequestsTests {
    static func send(
        _ method: String, _ url: String, headers: [(String, String)], body: String? = nil
    ) async throws -> (status: Int, headers: [String: String], body: String) {
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = method
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        request.httpBody = body.map { Data($0.utf8) }
        let (data, response) = try await URLSession.shared.data(for: request)
        let http = try #require(response as? HTTPURLResponse)
        var fields: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { fields[name.lowercased()] = value }
        }
        return (http.statusCode, fields, String(decoding: data, as: UTF8.self))
    }

    /// iOS 3.7.0's upload: every queued event in one batch, `Authorization: <write key>`,
    /// `Keen-Sdk: ios-3.7.0`, its timestamps as `yyyy-MM-dd'T'HH:mm:ss.SSSZZZZZ`; the answer lists
    /// each collection's events by index, the bad one failing alone with an error name the client
    /// knows to drop.
    @Test func iOSClientsBatchIsAnsweredByIndex() async throws {
        try await AnalyticsServer.with(projectID: "app") { server in
            let body = """
                {"app_launch":[{"keen":{"timestamp":"2026-11-20T14:03:12.250-05:00"},"session_duration":61.5}],\
                "views":[{"keen":{"timestamp":"2026-11-20T14:03:13.000-05:00"},"class_name":"LiveViewController"},\
                {"keen":{"timestamp":"2026-11-20T14:03:14.000-05:00"},"$bad":1},\
                {"keen":{"timestamp":"2026-11-20T14:03:15.000-05:00","location":{"coordinates":[-73.9,40.7]}},"class_name":"GameViewController"}]}
                """
            let answer = try await Self.send(
                "POST", "\(server.address)/3.0/projects/\(server.project)/events",
                headers: [
                    ("Authorization", server.keys["write_key"]!), ("Accept", "application/json"),
                    ("Content-Type", "application/json"), ("Keen-Sdk", "ios-3.7.0"),
                ], body: body)
            #expect(answer.status == 200, "\(answer.body)")
            let results = try #require(
                try JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: [[String: Any]]])
            #expect(results["app_launch"]?.map { $0["success"] as? Bool } == [true])
            #expect(results["views"]?.map { $0["success"] as? Bool } == [true, false, true])
            let error = results["views"]?[1]["error"] as? [String: Any]
            #expect(error?["name"] as? String == "InvalidPropertyNameError", "\(answer.body)")
            // The keys come back in the order sent (the client walks them in its own order anyway).
            #expect(answer.body.hasPrefix(#"{"app_launch":"#))

            // Stored with their timestamps in UTC.
            let extraction = try await Self.send(
                "GET",
                "\(server.address)/3.0/projects/\(server.project)/queries/extraction?event_collection=views&api_key=\(server.keys["read_key"]!)",
                headers: [])
            let events =
                try #require(
                    try JSONSerialization.jsonObject(with: Data(extraction.body.utf8)) as? [String: Any])["result"]
                as? [[String: Any]]
            #expect(
                events?.compactMap { ($0["keen"] as? [String: Any])?["timestamp"] as? String } == [
                    "2026-11-20T19:03:13.000Z", "2026-11-20T19:03:15.000Z",
                ])
        }
    }

    /// keen-tracking-js: a CORS preflight and `fetch` of one event (`Authorization`,
    /// `Content-Type`, `keen-sdk`), and `navigator.sendBeacon`'s text body with the key in the URL.
    @Test func keenTrackingJSRequestsAreAccepted() async throws {
        try await AnalyticsServer.with(projectID: "app") { server in
            let url = "\(server.address)/3.0/projects/\(server.project)/events/pageviews"
            let origin = ("Origin", "https://fans.example.org")
            let preflight = try await Self.send(
                "OPTIONS", url,
                headers: [
                    origin, ("Access-Control-Request-Method", "POST"),
                    ("Access-Control-Request-Headers", "authorization,content-type,keen-sdk"),
                ])
            #expect((200..<300).contains(preflight.status))
            #expect(preflight.headers["access-control-allow-origin"] == "*")
            let allowed = (preflight.headers["access-control-allow-headers"] ?? "").lowercased()
            #expect(["authorization", "content-type", "keen-sdk"].allSatisfy { allowed.contains($0) }, "\(allowed)")

            let fetched = try await Self.send(
                "POST", url,
                headers: [
                    origin, ("Authorization", server.keys["write_key"]!), ("Content-Type", "application/json"),
                    ("keen-sdk", "javascript-5.0.3"),
                ],
                body: #"{"page":{"title":"Live"},"keen":{"timestamp":"2026-11-20T19:03:13.123Z"}}"#)
            #expect(fetched.status == 201 && fetched.body == #"{"created":true}"#, "\(fetched.body)")
            #expect(fetched.headers["access-control-allow-origin"] == "*")

            let beacon = try await Self.send(
                "POST", url + "?api_key=\(server.keys["write_key"]!)",
                headers: [origin, ("Content-Type", "text/plain;charset=UTF-8")],
                body: #"{"page":{"title":"Scores"}}"#)
            #expect((200..<300).contains(beacon.status), "\(beacon.body)")

            // A read key cannot write, as Keen says.
            let refused = try await Self.send(
                "POST", url,
                headers: [("Authorization", server.keys["read_key"]!), ("Content-Type", "application/json")],
                body: #"{"page":{"title":"Live"}}"#)
            #expect(refused.status == 401, "\(refused.body)")

            let count = try await Self.send(
                "GET",
                "\(server.address)/3.0/projects/\(server.project)/queries/count?event_collection=pageviews&api_key=\(server.keys["read_key"]!)",
                headers: [])
            #expect(count.body == #"{"result":2}"#)
        }
    }

    /// keen-analysis.js 3's requests for saved queries and execution metadata (its README and
    /// lib/index.js): a CORS preflight for PUT, `client.post(queryPath + '/saved/name', {...})` to
    /// create, `client.put` to update, `client.query('saved', 'name')` (GET `.../result` with the
    /// read key), `client.del` to delete, and `POST /queries/count` with `include_metadata: true`
    /// and its browser's `timezone` in seconds.
    @Test func keenAnalysisJSSavedQueriesAndMetadata() async throws {
        try await AnalyticsServer.with(projectID: "app") { server in
            let base = "\(server.address)/3.0/projects/\(server.project)"
            let (master, read) = (server.keys["master_key"]!, server.keys["read_key"]!)
            let origin = ("Origin", "https://fans.example.org")
            let json = ("Content-Type", "application/json")
            for event in [#"{"tab":"live"}"#, #"{"tab":"live"}"#, #"{"tab":"scores"}"#] {
                let stored = try await Self.send(
                    "POST", "\(base)/events/views", headers: [("Authorization", server.keys["write_key"]!), json],
                    body: event)
                #expect(stored.status == 201)
            }
            let preflight = try await Self.send(
                "OPTIONS", "\(base)/queries/saved/live-views",
                headers: [
                    origin, ("Access-Control-Request-Method", "PUT"),
                    ("Access-Control-Request-Headers", "authorization,content-type"),
                ])
            #expect((200..<300).contains(preflight.status))
            #expect((preflight.headers["access-control-allow-methods"] ?? "").contains("PUT"))
            let listPreflight = try await Self.send(
                "OPTIONS", "\(base)/queries/saved", headers: [origin, ("Access-Control-Request-Method", "GET")])
            #expect((200..<300).contains(listPreflight.status), "\(listPreflight.body)")

            let created = try await Self.send(
                "POST", "\(base)/queries/saved/live-views", headers: [origin, ("Authorization", master), json],
                body: #"""
                    {"refresh_rate": 0, "query": {"analysis_type": "count", "event_collection": "views",
                     "filters": [{"property_name": "tab", "operator": "eq", "property_value": "live"}]},
                     "metadata": {"display_name": "Live views", "visualization": {"chart_type": "metric"}}}
                    """#)
            #expect(created.status == 201, "\(created.body)")
            #expect(created.headers["access-control-allow-origin"] == "*")
            let result = try await Self.send(
                "GET", "\(base)/queries/saved/live-views/result", headers: [origin, ("Authorization", read)])
            #expect(result.status == 200 && result.body.contains(#""result":2"#), "\(result.body)")
            #expect(result.body.contains(#""display_name":"Live views""#))

            let updated = try await Self.send(
                "PUT", "\(base)/queries/saved/live-views", headers: [origin, ("Authorization", master), json],
                body: #"{"refresh_rate": 0, "query": {"analysis_type": "count", "event_collection": "views"}}"#)
            #expect(updated.status == 200, "\(updated.body)")
            let all = try await Self.send(
                "GET", "\(base)/queries/saved/live-views/result", headers: [("Authorization", read)])
            #expect(all.body.contains(#""result":3"#), "\(all.body)")

            let metadata = try await Self.send(
                "POST", "\(base)/queries/count", headers: [origin, ("Authorization", read), json],
                body: #"{"event_collection": "views", "timezone": -18000, "include_metadata": true}"#)
            #expect(metadata.body.contains(#""result":3"#) && metadata.body.contains(#""events_scanned":3"#))

            let deleted = try await Self.send(
                "DELETE", "\(base)/queries/saved/live-views", headers: [origin, ("Authorization", master)])
            #expect(deleted.status == 204)
            let gone = try await Self.send(
                "GET", "\(base)/queries/saved/live-views/result", headers: [("Authorization", read)])
            #expect(gone.status == 404 && gone.body.contains("ResourceNotFoundError"), "\(gone.body)")
        }
    }
}
