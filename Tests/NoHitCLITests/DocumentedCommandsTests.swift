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

    /// A documented command: its line, and the output the page shows for it (empty when none).
    struct Command: Equatable {
        var line: String
        var output: [String] = []
    }

    /// A page's code blocks (indented four spaces, or fenced), as lists of `nohit` commands. A
    /// fenced block marked `output` right after a code block is what the page says its last
    /// command prints: each of its lines, in order, is a line of the command's standard output or
    /// error, `…` standing for any text (an id, a time).
    static func blocks(of text: String) -> [[Command]] {
        var blocks: [[Command]] = []
        var current: [Command] = []
        var fenced = false
        var output: [String]?
        // Whether the last block closed with nothing but blank lines since (an output block
        // belongs to it).
        var adjacent = false
        func close() {
            if !current.isEmpty {
                blocks.append(current)
                adjacent = true
            }
            current = []
        }
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line.hasPrefix("```") {
                if output != nil {
                    if adjacent, !blocks.isEmpty, !blocks[blocks.count - 1].isEmpty {
                        blocks[blocks.count - 1][blocks[blocks.count - 1].count - 1].output = output ?? []
                    }
                    output = nil
                    adjacent = false
                } else if !fenced && line.dropFirst(3).trimmingCharacters(in: .whitespaces) == "output" {
                    close()
                    output = []
                } else {
                    fenced.toggle()
                    if fenced { adjacent = false } else { close() }
                }
                continue
            }
            if output != nil {
                output?.append(line)
                continue
            }
            let code = fenced ? line : (line.hasPrefix("    ") ? String(line.dropFirst(4)) : nil)
            guard let code else {
                if !line.trimmingCharacters(in: .whitespaces).isEmpty {
                    close()
                    adjacent = false
                }
                continue
            }
            let trimmed = code.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("swift run nohit ") || trimmed.hasPrefix("nohit ") {
                current.append(Command(line: trimmed))
            }
        }
        close()
        return blocks
    }

    /// The lines the command itself printed (`nohit: …`), first, then how many log lines there were:
    /// a long log cut short in a report must not hide the line that differed.
    static func ownLines(_ output: String) -> String {
        let lines = output.split(separator: "\n", omittingEmptySubsequences: false)
        let own = lines.filter { $0.hasPrefix("nohit:") || $0.hasPrefix("console:") }
        return own.joined(separator: "\n") + "\n(and \(lines.count - own.count) other lines)"
    }

    /// The lines of `expected` that `standardOutput` and `standardError` do not show in order
    /// (each line whole, trimmed, `…` matching any text).
    static func unmatched(_ expected: [String], standardOutput: String, standardError: String) -> [String] {
        func lines(_ text: String) -> [String] {
            text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        }
        func matches(_ pattern: String, _ line: String) -> Bool {
            let parts = pattern.components(separatedBy: "…")
            guard parts.count > 1 else { return pattern == line }
            guard line.hasPrefix(parts[0]) else { return false }
            var rest = line.dropFirst(parts[0].count)
            for part in parts.dropFirst().dropLast() {
                guard let found = rest.range(of: part) else { return false }
                rest = rest[found.upperBound...]
            }
            return rest.hasSuffix(parts[parts.count - 1])
        }
        let streams = [lines(standardOutput), lines(standardError)]
        var cursors = [0, 0]
        var missing: [String] = []
        for pattern in expected.map({ $0.trimmingCharacters(in: .whitespaces) }) where !pattern.isEmpty {
            var found = false
            for stream in streams.indices {
                if let at = streams[stream][cursors[stream]...].firstIndex(where: { matches(pattern, $0) }) {
                    cursors[stream] = at + 1
                    found = true
                    break
                }
            }
            if !found { missing.append(pattern) }
        }
        return missing
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

    @Test func anOutputBlockIsWhatTheCommandBeforeItPrints() {
        let page = """
            Run:

                nohit devices add --console me
                nohit replay --date 2020-08-25

            ```output
            Giolito … 7 innings
            CWS 4, PIT 0
            ```

            Prose between:

                nohit odds

            Then

            ```output
            not this command's
            ```
            """
        let blocks = Self.blocks(of: page)
        #expect(
            blocks == [
                [
                    Command(line: "nohit devices add --console me"),
                    Command(line: "nohit replay --date 2020-08-25", output: ["Giolito … 7 innings", "CWS 4, PIT 0"]),
                ],
                [Command(line: "nohit odds")],
            ])
        let printed = "planned\nGiolito (CWS) 7 innings\nCWS 4, PIT 0 final\nCWS 4, PIT 0\n"
        #expect(Self.unmatched(blocks[0][1].output, standardOutput: printed, standardError: "").isEmpty)
        // In order, each line whole.
        #expect(
            Self.unmatched(["CWS 4, PIT 0", "Giolito … 7 innings"], standardOutput: printed, standardError: "") == [
                "Giolito … 7 innings"
            ])
        #expect(Self.unmatched(["CWS 4"], standardOutput: printed, standardError: "") == ["CWS 4"])
        #expect(Self.unmatched(["planned"], standardOutput: "", standardError: printed).isEmpty)
    }

    @Test func everyDocumentedCommandRuns() async throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("nohit-docs-\(UUID())")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let environment = [
            "NOHIT_RETROSHEET": TestData.packageRoot.appendingPathComponent("Data/retrosheet").path,
            "NOHIT_HTTP_PORT": "0",
        ]
        var ran = 0
        var shown = 0
        var skipped: [String] = []
        for page in Self.pages {
            let text = try String(contentsOf: TestData.packageRoot.appendingPathComponent(page), encoding: .utf8)
            let blocks = Self.blocks(of: text)
            // Every output block belongs to the command right before it (no prose between).
            #expect(
                blocks.joined().filter { !$0.output.isEmpty }.count == text.components(separatedBy: "```output").count
                    - 1,
                "\(page): an output block does not follow a command block directly")
            for (index, block) in blocks.enumerated() {
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
                for command in block {
                    let line = command.line
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
                    let started = ContinuousClock.now
                    defer {
                        // The slow ones said, so a run's length can be traced to its commands.
                        let took = ContinuousClock.now - started
                        if took > .seconds(10) { print("documented command took \(took): \(line)") }
                    }
                    if words.first == "serve" || background {
                        let text = try Executable.startCollecting(
                            "nohit", words, until: words.first == "serve" ? "stops gracefully" : " listening on ",
                            keepRunning: true, in: directory, environment: environment)
                        #expect(
                            text.output.contains(words.first == "serve" ? "stops gracefully" : " listening on "),
                            "\(page): `\(line)` did not come up:\n\(text.output)")
                        let missing = Self.unmatched(command.output, standardOutput: text.output, standardError: "")
                        #expect(missing.isEmpty, "\(page): `\(line)` no longer prints \(missing):\n\(text.output)")
                        if let process = text.process { running.append(process) }
                    } else {
                        let result = try await Executable.onThread { [words] in
                            try Executable.run("nohit", words, in: directory, environment: environment)
                        }
                        #expect(result.status == 0, "\(page): `\(line)` failed:\n\(result.standardError)")
                        let missing = Self.unmatched(
                            command.output, standardOutput: result.standardOutput, standardError: result.standardError)
                        #expect(
                            missing.isEmpty,
                            "\(page): `\(line)` no longer prints \(missing); its own lines:\n\(Self.ownLines(result.standardOutput + result.standardError))"
                        )
                        shown += command.output.isEmpty ? 0 : 1
                    }
                    ran += 1
                }
            }
        }
        print(
            "documented commands: \(ran) run, \(shown) with the output the page shows"
                + (skipped.isEmpty ? "" : "; skipped: \(skipped)"))
        #expect(ran >= 6 && ran + skipped.count >= 9, "fewer documented commands than the pages show")
    }
}
