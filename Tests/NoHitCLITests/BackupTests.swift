import Crypto
import Delivery
import Foundation
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `nohit backup` then `nohit restore` into a new directory (issue 58, item 4): the service starts
/// on it with its devices, outbox, Web Push subscription (and the VAPID key it was made with) and
/// analytics keys intact; a damaged backup and a data directory in use are refused, and nothing is
/// written.
extension OperatorCLITests {
    @Test func aBackupRestoredIntoANewDirectoryServesAsTheOriginal() async throws {
        let console = try nohit(["devices", "add", "--data-dir", "live", "--console", "me"])
        #expect(console.status == 0, "\(console.standardError)")
        let project = try nohit(["analytics", "project", "create", "--data-dir", "live", "App", "--json"])
        #expect(project.status == 0, "\(project.standardError)")
        let keys = try #require(
            try JSONSerialization.jsonObject(with: Data(project.standardOutput.utf8)) as? [String: String])
        // A day replayed: its alerts are in the outbox, and the VAPID key is made.
        let replay = try await Executable.onThread {
            try self.nohit([
                "replay", "--date", "2020-08-25", "--data", TestData.path("retrosheet"), "--data-dir", "live",
                "--quiet",
            ])
        }
        #expect(replay.status == 0, "\(replay.standardError)")
        let delivered = try #require(
            replay.standardError.firstMatch(of: /outbox: (\d+) delivered/).flatMap { Int($0.1) })
        #expect(delivered > 0, "\(replay.standardError)")
        // A browser subscribed with the server's key.
        let subscriber = P256.KeyAgreement.PrivateKey()
        let subscribed = try nohit([
            "devices", "add", "--data-dir", "live", "--allow-private-networks", "--web-push",
            "https://127.0.0.1:9/push", "--p256dh", Base64URL.encode(subscriber.publicKey.x963Representation), "--auth",
            Base64URL.encode(Data((0..<16).map { _ in UInt8.random(in: 0...255) })),
        ])
        #expect(subscribed.status == 0, "\(subscribed.standardError)")

        // Backed up while the original serves (its first start made the web app's project).
        let (live, _) = try Executable.start(
            "nohit",
            [
                "serve", "--date", "2020-08-25", "--data", TestData.path("retrosheet"), "--data-dir", path("live"),
                "--port", "0",
            ])
        let backup = try nohit(["backup", "bk", "--data-dir", "live"])
        live.terminate()
        live.waitUntilExit()
        #expect(backup.status == 0, "\(backup.standardError)")
        #expect(
            backup.standardOutput
                == "backed up into bk/: nohit.sqlite, secrets.key, vapid.pem, web-analytics.json\n")
        #expect(contents("bk") == ["backup.json", "nohit.sqlite", "secrets.key", "vapid.pem", "web-analytics.json"])

        // Refused, writing nothing: into a data directory in use, and from a damaged backup.
        let over = try nohit(["restore", "bk", "--data-dir", "live"])
        #expect(over.status != 0)
        #expect(over.standardError.contains("is there already: restore into a new data directory"))
        try FileManager.default.copyItem(atPath: path("bk"), toPath: path("damaged"))
        try Data("x".utf8).write(to: URL(fileURLWithPath: path("damaged/vapid.pem")), options: .atomic)
        let damaged = try nohit(["restore", "damaged", "--data-dir", "other"])
        #expect(damaged.status != 0)
        #expect(
            damaged.standardError.contains(
                "damaged/vapid.pem is not the file that was backed up (its SHA-256 differs from backup.json's): "
                    + "nothing was restored"), "\(damaged.standardError)")
        #expect(contents("other") == nil)

        let restore = try nohit(["restore", "bk", "--data-dir", "restored"])
        #expect(restore.status == 0, "\(restore.standardError)")
        #expect(restore.standardOutput.contains("into restored/: 2 devices, "), "\(restore.standardOutput)")
        #expect(restore.standardOutput.contains("start it with nohit serve --data-dir restored"))

        for command in [["devices", "list"], ["analytics", "project", "list"]] {
            let original = try nohit(command + ["--data-dir", "live"])
            let copy = try nohit(command + ["--data-dir", "restored"])
            #expect(copy.status == 0 && copy.standardOutput == original.standardOutput, "\(command)")
        }
        // Served from the copy: ready, the same VAPID public key, the project's read key works, and
        // the outbox holds what the original's does (the day replayed again sends nothing new).
        let (served, address) = try Executable.start(
            "nohit",
            [
                "serve", "--date", "2020-08-25", "--data", TestData.path("retrosheet"), "--data-dir",
                path("restored"), "--port", "0",
            ])
        defer {
            served.terminate()
            served.waitUntilExit()
        }
        let (config, _) = try await URLSession.shared.data(from: URL(string: address + "/api/config")!)
        let answer = try #require(try JSONSerialization.jsonObject(with: config) as? [String: Any])
        let vapid = try #require(answer["vapid_public_key"] as? String, "\(answer)")
        // The web app's project is the one the original made (its file and the database agree).
        let web = try #require(
            try JSONSerialization.jsonObject(
                with: Data(contentsOf: URL(fileURLWithPath: path("live/web-analytics.json"))))
                as? [String: String])
        #expect((answer["analytics"] as? [String: String])?["write_key"] == web["write_key"], "\(answer)")
        let original = try P256.Signing.PrivateKey(
            pemRepresentation: String(contentsOfFile: path("live/vapid.pem"), encoding: .utf8))
        #expect(vapid == Base64URL.encode(original.publicKey.x963Representation))
        let projectID = keys["project_id"] ?? ""
        var request = URLRequest(
            url: URL(string: address + "/3.0/projects/\(projectID)/queries/count?event_collection=taps")!)
        request.setValue(keys["read_key"], forHTTPHeaderField: "Authorization")
        let (_, counted) = try await URLSession.shared.data(for: request)
        #expect((counted as? HTTPURLResponse)?.statusCode == 200)
        served.terminate()
        served.waitUntilExit()
        let again = try await Executable.onThread {
            try self.nohit([
                "replay", "--date", "2020-08-25", "--data", TestData.path("retrosheet"), "--data-dir", "restored",
                "--quiet",
            ])
        }
        #expect(again.status == 0, "\(again.standardError)")
        #expect(again.standardError.contains("this run: 0 delivered"), "\(again.standardError)")
        #expect(again.standardError.contains("outbox: \(delivered) delivered"), "\(again.standardError)")
    }
}
