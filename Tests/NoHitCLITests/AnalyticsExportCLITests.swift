import Foundation
import TestSupport
import Testing

/// `nohit analytics export` as an operator runs it beside a serving instance (SQLite; PostgreSQL
/// too when `NOHIT_TEST_POSTGRES` is set): every event written through Keen's API, in order, to
/// standard output; to a file cut after any event and resumed from what it says last, the file
/// then equal to the whole; CSV; bad input said.
@Suite(.serialized, .ownThreads) struct AnalyticsExportCLITests {
    static var databases: [String?] {
        [nil] + (TestPostgres.url(schema: "exportcli").map { [$0] } ?? [])
    }

    @Test(arguments: databases)
    func theOperatorExportsACollectionAndResumesIt(_ database: String?) async throws {
        try await AnalyticsServer.with(database: database) { server in
            for batch in 0..<3 {
                let events = (0..<1_500).map { #"{"i":\#(batch * 1_500 + $0),"tab":"a,\"b\""}"# }
                _ = try await PropertySquattingTests.post(server, #"{"views":[\#(events.joined(separator: ","))]}"#)
            }
            let store = ["--data-dir", server.directory.path] + (database.map { ["--database", $0] } ?? [])
            func export(_ arguments: [String]) throws -> Executable.Output {
                try Executable.run("nohit", ["analytics", "export", server.project] + arguments + store)
            }
            let all = try export(["views"])
            #expect(all.status == 0, "\(all.standardError)")
            let lines = all.standardOutput.split(separator: "\n").map(String.init)
            #expect(lines.count == 4_500)
            let indices = lines.compactMap {
                (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["i"] as? Int
            }
            #expect(Set(indices) == Set(0..<4_500), "every event once")
            #expect(
                all.standardError.hasPrefix(
                    "nohit: exported 4500 events of \(server.project)/views to standard output; the last: keen.timestamp "
                ),
                "\(all.standardError)")

            // Interrupted after event 1,234 while writing the next line (half of it in the file),
            // resumed after it: the unfinished line is cut off and comes again.
            let file = server.directory.appendingPathComponent("views.ndjson").path
            try (lines.prefix(1_235).joined(separator: "\n") + "\n" + lines[1_235].prefix(40))
                .write(toFile: file, atomically: true, encoding: .utf8)
            let last = try #require(
                try JSONSerialization.jsonObject(with: Data(lines[1_234].utf8)) as? [String: Any])
            let keen = try #require(last["keen"] as? [String: Any])
            let resumed = try export([
                "views", "-o", file, "--after-timestamp", try #require(keen["timestamp"] as? String), "--after-id",
                try #require(keen["id"] as? String),
            ])
            #expect(resumed.status == 0, "\(resumed.standardError)")
            #expect(resumed.standardError.contains("nohit: cut 40 bytes of an unfinished last line off \(file)"))
            #expect(
                resumed.standardError.contains("\nnohit: exported 3265 events of \(server.project)/views to \(file)"),
                "\(resumed.standardError)")
            #expect(try String(contentsOfFile: file, encoding: .utf8) == all.standardOutput)

            let csv = try export(["views", "--format", "csv"])
            #expect(csv.status == 0, "\(csv.standardError)")
            #expect(csv.standardOutput.hasPrefix("keen.timestamp,keen.created_at,keen.id,i,tab\r\n"))
            #expect(csv.standardOutput.components(separatedBy: "\r\n").count == 4_502)
            #expect(csv.standardOutput.contains(#",0,"a,""b"""\#r\#n"#))
            // A CSV resumed into its file: the header kept, the rows after the cursor appended.
            let csvFile = server.directory.appendingPathComponent("views.csv").path
            let csvRows = csv.standardOutput.components(separatedBy: "\r\n")
            try (csvRows.prefix(1_001).joined(separator: "\r\n") + "\r\n")
                .write(toFile: csvFile, atomically: true, encoding: .utf8)
            let fields = csvRows[1_000].split(separator: ",")
            let csvResumed = try export([
                "views", "--format", "csv", "-o", csvFile, "--after-timestamp", String(fields[0]), "--after-id",
                String(fields[2]),
            ])
            #expect(csvResumed.status == 0, "\(csvResumed.standardError)")
            #expect(try String(contentsOfFile: csvFile, encoding: .utf8) == csv.standardOutput)

            for (arguments, said) in [
                (["views", "--format", "xml"], "--format: 'xml' is not a format of an export: ndjson or csv"),
                (["nothing"], "no event collection 'nothing' in project \(server.project)"),
                (["views", "--after-id", "0"], "both --after-timestamp and --after-id"),
                (["views", "--start", "soon"], "--start: 'soon' is not a time"),
            ] {
                let refused = try export(arguments)
                #expect(refused.status != 0 && refused.standardError.contains(said), "\(refused.standardError)")
            }
        }
    }
}
