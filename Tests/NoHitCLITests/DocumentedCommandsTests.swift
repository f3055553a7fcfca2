import Foundation
import TestSupport
import Testing

/// Every `nohit` command the README and docs/ show in a code block, run as a reader would (issue
/// 38): the blocks of a page in order, each block's lines one after the other in one scratch
/// directory, a line ending in `&` kept running until its block is done, a server (`serve`)
/// until it says where to open it. A command that fails, or a server that never comes up, fails
/// the test with the page and the line.
///
/// Only loopback: the bundled 2020 season is found through `$NOHIT_RETROSHEET`, a server's port is
/// 0 (`NOHIT_HTTP_PORT`, and `--port N` read as `--port 0`), and the PostgreSQL URL of the docs is
/// the test server's (`$NOHIT_TEST_POSTGRES`, a schema of its own; without one those lines are
/// skipped and said so). Lines with a placeholder (`<KEY ID>`, `…`) are examples to fill in, not
/// commands, and are only checked to be a command `nohit` has.
@Suite(.ownThreads) struct DocumentedCommandsTests {
    static let pages = [
        "README.md", "docs/operating.md", "docs/reference.md", "docs/configuration.md", "docs/analytics.md",
        "docs/stream-scale.md",
    ]

    /// A page's code blocks (indented four spaces, or fenced), as lists of `nohit` command lines.
    static func blocks(of text: String) -> [[String]] {
        var blocks: [[String]] = []
        var current: [String] = []
        var fenced = false
        func close() {
            if !current.isEmpty { blocks.append(current) }
            current = []
        }
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line.hasPrefix("```") {
                fenced.toggle()
                if !fenced { close() }
                continue
            }
            let code = fenced ? line : (line.hasPrefix("    ") ? String(line.dropFirst(4)) : nil)
            guard let code else {
                if !line.trimmingCharacters(in: .whitespaces).isEmpty { close() }
                continue
            }
            let trimmed = code.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("swift run nohit ") || trimmed.hasPrefix("nohit ") { current.append(trimmed) }
        }
        close()
        return blocks
    }

    /// The words of a command line: its comment (two spaces and `#`) and a trailing `&` removed,
    /// quotes honoured.
    static func words(_ line: String) -> (words: [String], background: Bool) {
        var text = line
        if let comment = text.range(of: "  #") { text = String(text[..<comment.lowerBound]) }
        text = text.trimmingCharacters(in: .whitespaces)
        let background = text.hasSuffix("&")
        if background { text = String(text.dropLast()).trimmingCharacters(in: .whitespaces) }
        var words: [String] = []
        var word = ""
        var quote: Character?
        for character in text {
            if let open = quote {
                if character == open { quote = nil } else { word.append(character) }
            } else if character == "\"" || character == "'" {
                quote = character
            } else if character == " " {
                if !word.isEmpty { words.append(word) }
                word = ""
            } else {
                word.append(character)
            }
        }
        if !word.isEmpty { words.append(word) }
        if words.first == "swift" { words.removeFirst(2) }  // swift run
        words.removeFirst()  // nohit
        return (words, background)
    }

    @Test func everyDocumentedCommandRuns() async throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("nohit-docs-\(UUID())")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let environment = [
            "NOHIT_RETROSHEET": TestData.packageRoot.appendingPathComponent("Data/retrosheet").path,
            "NOHIT_HTTP_PORT": "0",
        ]
        var ran = 0
        var skipped: [String] = []
        for page in Self.pages {
            let text = try String(contentsOf: TestData.packageRoot.appendingPathComponent(page), encoding: .utf8)
            for (index, block) in Self.blocks(of: text).enumerated() {
                let directory = scratch.appendingPathComponent("\(page.replacing("/", with: "-"))-\(index)")
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                let database = TestPostgres.url(schema: "docs\(index)")
                var running: [Process] = []
                defer {
                    for process in running {
                        process.terminate()
                        process.waitUntilExit()
                    }
                }
                for line in block {
                    var (words, background) = Self.words(line)
                    if line.contains("<") || line.contains("…") {
                        // An example to fill in: the command exists.
                        let help = try Executable.run("nohit", Array(words.prefix(1)) + ["--help"], in: directory)
                        #expect(help.status == 0, "\(page): \(line)")
                        continue
                    }
                    if let at = words.firstIndex(of: "--port"), at + 1 < words.count { words[at + 1] = "0" }
                    if let at = words.firstIndex(where: { $0.hasPrefix("postgres://") }) {
                        guard let database else {
                            skipped.append("\(page): \(line) (no PostgreSQL server: NOHIT_TEST_POSTGRES)")
                            continue
                        }
                        words[at] = database
                    }
                    if words.first == "serve" || background {
                        let text = try Executable.startCollecting(
                            "nohit", words, until: words.first == "serve" ? "stops gracefully" : " listening on ",
                            keepRunning: true, in: directory, environment: environment)
                        #expect(
                            text.output.contains(words.first == "serve" ? "stops gracefully" : " listening on "),
                            "\(page): `\(line)` did not come up:\n\(text.output)")
                        if let process = text.process { running.append(process) }
                    } else {
                        let result = try await Executable.onThread { [words] in
                            try Executable.run("nohit", words, in: directory, environment: environment)
                        }
                        #expect(result.status == 0, "\(page): `\(line)` failed:\n\(result.standardError)")
                    }
                    ran += 1
                }
            }
        }
        print("documented commands: \(ran) run" + (skipped.isEmpty ? "" : "; skipped: \(skipped)"))
        #expect(ran >= 6 && ran + skipped.count >= 9, "fewer documented commands than the pages show")
    }
}
