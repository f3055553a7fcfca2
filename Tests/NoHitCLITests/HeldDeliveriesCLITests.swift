import Crypto
import Foundation
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A wrong key for one of two apps (issue 58, item 3): the operator is told once, at the default
/// level, with the fix; the metric counts the refusals by Apple's reason; `/readyz` is degraded
/// saying why; no delivery fails. With the key mended, the next start sends every held delivery,
/// each once, under its own id.
extension OperatorCLITests {
    @Test func aWrongKeyForOneAppIsSaidAndItsDeliveriesHeldUntilItIsMended() async throws {
        let server = try await startFakeAPNs()
        defer { Task { try? await server.shutdown() } }
        try Data(P256.Signing.PrivateKey().pemRepresentation.utf8).write(
            to: URL(fileURLWithPath: path("AuthKey_OTHERKEY01.p8")))
        func apps(scoredKey: Bool) throws {
            let key = #", "apns": {"key": "AuthKey_OTHERKEY01.p8", "key-id": "OTHERKEY01", "team-id": "OTHERTEAM1"}"#
            try Data(
                """
                {"apps": [
                  {"id": "alerts", "topic": "com.example.nohit", "environment": "production"},
                  {"id": "scored", "topic": "com.example.scored", "environment": "sandbox"\(scoredKey ? key : "")}
                ]}
                """.utf8
            ).write(to: folder.appendingPathComponent("apps.json"))
        }
        try apps(scoredKey: true)
        for (app, token) in [("alerts", "b1"), ("scored", "b2"), ("scored", "b3")] {
            let added = try nohit([
                "devices", "add", "--data-dir", "d", "--apps", "apps.json", "--app", app, "--apns",
                String(repeating: token, count: 32), "--threshold", "4",
            ])
            #expect(added.status == 0, "\(added.standardError)")
        }
        let replay = [
            "replay", "--date", "2020-08-25", "--data", TestData.path("retrosheet"), "--data-dir", "d", "--fake-apns",
            path("fa"), "--apps", "apps.json", "--quiet",
        ]
        let first = try await Executable.onThread { try self.nohit(replay) }
        #expect(first.status == 0, "\(first.standardError)")
        let delivered = server.state.accepted.count
        #expect(delivered > 0)
        // Two scored devices, as many alerts each as the alerts device: held, none failed.
        let held = 2 * delivered
        #expect(first.standardError.contains(" 0 failed, \(held) held"), "\(first.standardError)")
        #expect(first.standardError.contains("0 failed, 0 superseded, \(held) held"), "\(first.standardError)")
        let said = first.standardError.components(separatedBy: "refuses this server's pushes for").count - 1
        #expect(said == 1, "said \(said) times: \(first.standardError)")
        #expect(
            first.standardError.contains(
                "apns refuses this server's pushes for com.example.scored (sandbox): InvalidProviderToken; the key "
                    + "(apns.key), its key id (apns.key-id) and team id (apns.team-id), or an app's own in the apps "
                    + "file, do not belong together"), "\(first.standardError)")

        // Served with the key still wrong: the held deliveries go out once more, are refused again,
        // and the service says so where an operator looks.
        let (serve, address) = try Executable.start(
            "nohit",
            [
                "serve", "--date", "2020-08-25", "--data", TestData.path("retrosheet"), "--data-dir", path("d"),
                "--port", "0", "--apps", path("apps.json"), "--fake-apns", path("fa"),
            ])
        defer {
            serve.terminate()
            serve.waitUntilExit()
        }
        var readiness: [String: Any] = [:]
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            let (body, response) = try await URLSession.shared.data(from: URL(string: address + "/readyz")!)
            readiness = try JSONSerialization.jsonObject(with: body) as? [String: Any] ?? [:]
            if (response as? HTTPURLResponse)?.statusCode == 503 { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(readiness["degraded"] as? [String] == ["delivery"], "\(readiness)")
        let reason = ((readiness["checks"] as? [String: Any])?["delivery"] as? [String: Any])?["reason"] as? String
        #expect(
            reason?.contains("apns refuses com.example.scored (sandbox): InvalidProviderToken — the key") == true,
            "\(reason ?? "")")
        // Every held delivery refused once more (the first refusal degraded /readyz; the rest follow).
        var metrics = ""
        var refused = 0.0
        while ContinuousClock.now < deadline {
            let (scrape, _) = try await URLSession.shared.data(from: URL(string: address + "/metrics")!)
            metrics = String(decoding: scrape, as: UTF8.self)
            let line = metrics.split(separator: "\n").first {
                $0.hasPrefix(#"nohit_delivery_failures_total{channel="apns",reason="InvalidProviderToken"}"#)
            }
            refused = line.flatMap { Double($0.split(separator: " ").last ?? "") } ?? 0
            if refused >= Double(held) { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(refused == Double(held), "\(metrics)")
        #expect(!metrics.contains(#"nohit_deliveries_total{channel="apns",outcome="failed"} 1"#))
        serve.terminate()
        serve.waitUntilExit()

        // The key mended (the scored app signs with the server's key, which this fake knows): the
        // next start sends every held delivery, each once.
        try apps(scoredKey: false)
        let mended = try await Executable.onThread { try self.nohit(replay) }
        #expect(mended.status == 0, "\(mended.standardError)")
        #expect(mended.standardError.contains("\(held) deliveries held for a configuration"), "\(mended.standardError)")
        #expect(mended.standardError.contains(" 0 failed, 0 devices pruned"), "\(mended.standardError)")
        #expect(!mended.standardError.contains(" held, "), "\(mended.standardError)")
        let scored = server.state.accepted.filter {
            server.state.notification(apnsID: $0.apnsID)?.topic == "com.example.scored"
        }
        #expect(scored.count == held)
        #expect(Set(scored.map(\.apnsID)).count == held)
        #expect(server.state.accepted.count == delivered + held)
    }
}
