import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `nohit push test --device ID` (issue 58, item 3): one real push through the configured
/// provider (here the fake APNs, as `--fake-apns` names it) and the provider's answer in the
/// operator's words; nothing stored, the device unchanged whatever the answer.
extension OperatorCLITests {
    @Test func aTestPushGoesThroughTheProviderAndItsAnswerIsSaid() async throws {
        let server = try await startFakeAPNs()
        defer { Task { try? await server.shutdown() } }
        var ids: [String: String] = [:]
        for (name, token) in [
            ("good", String(repeating: "b1", count: 32)), ("gone", "410" + String(repeating: "0", count: 61)),
            ("large", "413" + String(repeating: "0", count: 61)),
        ] {
            let added = try nohit(["devices", "add", "--data-dir", "d", "--apns", token])
            #expect(added.status == 0, "\(added.standardError)")
            ids[name] = try #require(added.standardOutput.firstMatch(of: /id: (\S+)\n/).map { String($0.1) })
        }
        func push(_ device: String) async throws -> Executable.Output {
            try await Executable.onThread {
                try self.nohit(["push", "test", "--device", device, "--data-dir", "d", "--fake-apns", self.path("fa")])
            }
        }
        let good = try await push(ids["good"] ?? "")
        #expect(good.status == 0, "\(good.standardError)")
        let pushID = try #require(
            good.standardOutput.firstMatch(of: #/apns accepted the test push \(id ([0-9a-f-]{36}); /#).map {
                String($0.1)
            },
            "\(good.standardOutput)")
        #expect(
            good.standardOutput.hasSuffix("; com.example.nohit, production): it should show on the device now\n"),
            "\(good.standardOutput)")
        let shown = try #require(server.state.notification(apnsID: pushID))
        let payload = try #require(try JSONSerialization.jsonObject(with: shown.payload) as? [String: Any])
        let alert = (payload["aps"] as? [String: Any])?["alert"] as? [String: String]
        #expect(alert?["title"] == "No-Hitter Alerts", "\(payload)")

        let gone = try await push(ids["gone"] ?? "")
        #expect(gone.status == 1)
        #expect(
            gone.standardError.contains("nohit: apns says the device is gone: Unregistered"), "\(gone.standardError)")
        let large = try await push(ids["large"] ?? "")
        #expect(large.status == 1)
        #expect(
            large.standardError.contains("nohit: apns refused the test push: 413 PayloadTooLarge"),
            "\(large.standardError)")
        // Nothing changed: every device still active, nothing in an outbox.
        let list = try nohit(["devices", "list", "--data-dir", "d"])
        #expect(list.standardOutput.contains("apns: 3 active"), "\(list.standardOutput)")

        let unknown = try await push(UUID().uuidString)
        #expect(unknown.status != 0)
        #expect(unknown.standardError.contains("nohit: no device "), "\(unknown.standardError)")
        let malformed = try await push("phone")
        #expect(malformed.standardError.contains("--device must be a device's id"), "\(malformed.standardError)")

        // The same from the operator's API of a running server.
        try Data("operator-secret".utf8).write(to: URL(fileURLWithPath: path("admin-token")))
        chmod(path("admin-token"), 0o600)
        let (served, address) = try Executable.start(
            "nohit",
            [
                "serve", "--date", "2020-08-25", "--data", TestData.path("retrosheet"), "--data-dir", path("d"),
                "--port", "0", "--fake-apns", path("fa"), "--admin-token-file", path("admin-token"),
            ])
        defer {
            served.terminate()
            served.waitUntilExit()
        }
        func test(_ id: String, token: String = "operator-secret") async throws -> (Int, [String: Any]) {
            var request = URLRequest(url: URL(string: "\(address)/api/admin/devices/\(id)/test")!)
            request.httpMethod = "POST"
            request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
            let (body, response) = try await URLSession.shared.data(for: request)
            return (
                (response as? HTTPURLResponse)?.statusCode ?? 0,
                (try? JSONSerialization.jsonObject(with: body) as? [String: Any]) ?? [:]
            )
        }
        let (status, answer) = try await test(ids["good"] ?? "")
        #expect(status == 200 && answer["accepted"] as? Bool == true && answer["outcome"] as? String == "accepted")
        #expect(server.state.notification(apnsID: answer["push_id"] as? String ?? "") != nil, "\(answer)")
        let (goneStatus, goneAnswer) = try await test(ids["gone"] ?? "")
        #expect(goneStatus == 200 && goneAnswer["outcome"] as? String == "gone", "\(goneAnswer)")
        #expect((goneAnswer["message"] as? String)?.contains("Unregistered") == true)
        #expect(try await test(UUID().uuidString).0 == 404)
        #expect(try await test(ids["good"] ?? "", token: "wrong").0 == 401)
    }
}
