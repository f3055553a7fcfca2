import Foundation
import TestSupport
import Testing

/// `nohit serve` replaying 2020-08-25 from the repository's own data, on loopback, with an
/// analytics project made first by `nohit analytics project create` (its id and keys as the
/// command prints them in JSON), for the tests that drive Keen's API with real clients.
struct AnalyticsServer {
    var address: String
    var keys: [String: String]
    /// The server process (for its memory, or to stop it).
    var process: Process
    /// Its data directory.
    var directory: URL

    var project: String { keys["project_id"] ?? "" }

    /// `database`: a PostgreSQL URL to keep everything in instead of the data directory's SQLite.
    static func with(
        projectID: String? = nil, database: String? = nil, settings: [String: Any] = [:],
        _ body: (AnalyticsServer) async throws -> Void
    ) async throws {
        let store = database.map { ["--database", $0] } ?? []
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("analytics-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let created = try Executable.run(
            "nohit",
            ["analytics", "project", "create", "app", "--json", "--data-dir", directory.path]
                + (projectID.map { ["--id", $0] } ?? []) + store)
        #expect(created.status == 0, "\(created.standardError)")
        let keys = try #require(
            try JSONSerialization.jsonObject(with: Data(created.standardOutput.utf8)) as? [String: String])
        var configuration: [String] = []
        if !settings.isEmpty {
            let file = directory.appendingPathComponent("settings.json")
            try JSONSerialization.data(withJSONObject: settings).write(to: file)
            configuration = ["--config", file.path]
        }
        let (server, address) = try Executable.start(
            "nohit",
            [
                "serve", "--replay", "2020-08-25", "--port", "0", "--data",
                TestData.packageRoot.appendingPathComponent("Data/retrosheet").path, "--data-dir", directory.path,
            ] + store + configuration)
        defer {
            server.terminate()
            server.waitUntilExit()
        }
        try #require(address.hasPrefix("http://"), "no address in the server's banner")
        try await body(AnalyticsServer(address: address, keys: keys, process: server, directory: directory))
    }
}
