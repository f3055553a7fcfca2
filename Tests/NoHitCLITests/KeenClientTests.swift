import Foundation
import Storage
import TestSupport
import Testing

/// Keen's official Python client (PyPI keen 0.7.0, unchanged; `Tests/Keen/get-keen` puts it in
/// `.build/keen-venv`, `.ci/run` calls it) against `nohit serve`: `Tests/Keen/keen_client.py`
/// writes events through it and checks every analysis type (standard_deviation too), filters ("or"
/// ones too), intervals, group_by, funnels, execution metadata and saved and cached queries against
/// values it computes from the events it sent.
@Suite(.ownThreads) struct KeenClientTests {
    static let python: String? = {
        let path = TestData.packageRoot.appendingPathComponent(".build/keen-venv/bin/python").path
        return FileManager.default.isExecutableFile(atPath: path) ? path : nil
    }()

    @Test(.enabled(if: python != nil, "needs Keen's Python client: Tests/Keen/get-keen (.ci/run calls it)"))
    func keensPythonClientGetsTheAnswersItsEventsMake() async throws {
        try await Self.run(database: nil)
    }

    /// The same against `nohit serve` on PostgreSQL.
    @Test(
        .enabled(if: python != nil, "needs Keen's Python client: Tests/Keen/get-keen (.ci/run calls it)"), .postgres)
    func keensPythonClientGetsTheSameAnswersOnPostgreSQL() async throws {
        let url = try #require(TestPostgres.url(schema: "keen"))
        try await Self.run(database: url)
        try await PostgresStore.withStore(try PostgresStore.Location(url: url), secrets: .ephemeral()) {
            try await $0.dropSchema()
        }
    }

    static func run(database: String?) async throws {
        try await AnalyticsServer.with(database: database) { server in
            let (address, keys) = (server.address, server.keys)
            let output = try await Executable.onThread { () throws -> (Int32, String) in
                let process = Process()
                process.executableURL = URL(fileURLWithPath: Self.python!)
                process.arguments = [
                    TestData.packageRoot.appendingPathComponent("Tests/Keen/keen_client.py").path, address,
                    keys["project_id"] ?? "", keys["master_key"] ?? "", keys["write_key"] ?? "", keys["read_key"] ?? "",
                ]
                let pipe = Pipe()
                process.standardOutput = pipe
                process.standardError = pipe
                try process.run()
                let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                process.waitUntilExit()
                return (process.terminationStatus, text)
            }
            print(output.1)
            #expect(output.0 == 0, "\(output.1)")
            #expect(output.1.contains("keen client: 0 failure(s)"))
        }
    }
}
