import Foundation
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The shipped Grafana dashboard (`deploy/grafana`) and Prometheus rules (`deploy/prometheus`) ask
/// only for metrics the server exports: read from a running `nohit serve`'s `/metrics` after a
/// replayed day delivered alerts. (`promtool check rules` and `promtool test rules` run in CI.)
@Suite(.ownThreads) struct MonitoringTests {
    static let folder = FileManager.default.temporaryDirectory.appendingPathComponent("nohit-monitoring-\(UUID())")

    /// Metric names in PromQL expressions: ours, Hummingbird's (and `up`, Prometheus' own).
    static func metricNames(in text: String) -> Set<String> {
        Set(text.matches(of: /\b(?:nohit|hb|http_server)_[a-z_]+\b/).map { String($0.output) })
    }

    @Test func theDashboardAndTheRulesAskOnlyForExportedMetrics() async throws {
        try FileManager.default.createDirectory(at: Self.folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: Self.folder) }
        let data = Self.folder.appendingPathComponent("data").path
        let added = try Executable.run("nohit", ["devices", "add", "--data-dir", data, "--console", "me"])
        #expect(added.status == 0, "\(added.standardError)")
        let (server, address) = try Executable.start(
            "nohit",
            [
                "serve", "--date", "2020-08-25", "--speed", "0", "--data", TestData.path("retrosheet"), "--data-dir",
                data, "--port", "0",
            ])
        defer {
            server.terminate()
            server.waitUntilExit()
        }
        // Until the day's alerts reached the console (their deliveries and latency are counted).
        var metrics = ""
        let started = ContinuousClock.now
        while ContinuousClock.now - started < .seconds(120) {
            _ = try await URLSession.shared.data(from: URL(string: address + "/api/games")!)
            let (body, _) = try await URLSession.shared.data(from: URL(string: address + "/metrics")!)
            metrics = String(decoding: body, as: UTF8.self)
            if metrics.contains(#"nohit_deliveries_total{channel="console",outcome="delivered"} 5"#) { break }
            try await Task.sleep(for: .milliseconds(200))
        }
        var exported: Set<String> = []
        for match in metrics.matches(of: /# TYPE ([a-z_]+) ([a-z]+)/) {
            let name = String(match.1)
            exported.insert(name)
            if match.2 == "histogram" { exported.formUnion(["_bucket", "_sum", "_count"].map { name + $0 }) }
        }
        #expect(exported.contains("nohit_alert_latency_seconds_bucket"))

        let dashboard = try Data(
            contentsOf: TestData.packageRoot.appendingPathComponent("deploy/grafana/nohit-dashboard.json"))
        let root = try #require(try JSONSerialization.jsonObject(with: dashboard) as? [String: Any])
        let panels = try #require(root["panels"] as? [[String: Any]])
        let expressions = panels.flatMap {
            ($0["targets"] as? [[String: Any]] ?? []).compactMap { $0["expr"] as? String }
        }
        #expect(expressions.count >= 15)
        let rules = try String(
            contentsOf: TestData.packageRoot.appendingPathComponent("deploy/prometheus/nohit-rules.yml"),
            encoding: .utf8)
        for (source, text) in [("the dashboard", expressions.joined(separator: "\n")), ("the rules", rules)] {
            let names = Self.metricNames(in: text)
            #expect(names.count >= 5, "\(source)")
            let missing = names.subtracting(exported).sorted()
            #expect(missing.isEmpty, "\(source) asks for metrics the server does not export: \(missing)")
        }
    }
}
