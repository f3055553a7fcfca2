import ArgumentParser
import Foundation
import Retrosheet

/// `nohit events FILE...`: one CSV row per play, with the columns of Chadwick's `cwevent` used in
/// the reference output, so the two can be diffed.
struct EventsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "events",
        abstract: "Print one CSV row per play of Retrosheet event files, in cwevent's format.",
        discussion: """
            Columns: \(CWEventCSV.columns.joined(separator: ", ")).
            A damaged record is read as cwevent reads it, with a warning on standard error (file, \
            line, text, how it was read), and the warnings are counted by kind of record at the end. \
            A game that cannot be read is reported on standard error (file, line, text, reason) and \
            skipped; the exit status is then 1.
            """
    )

    @Argument(help: "Event files (.EVA, .EVN), directories of them, or Retrosheet's season zips (1950eve.zip).")
    var paths: [String]

    func run() async throws {
        let files = try SeasonInput.files(paths)
        let output = FileHandle.standardOutput
        output.write(Data(CWEventCSV.header.utf8))
        var skipped = 0
        var warnings = ReadingWarnings()
        try await EventFiles.forEach(files, { EventFileExport.export($0) }) { export in
            try StandardStreams.writeOutput(export.rows)
            for warning in export.warnings {
                StandardStreams.writeError("nohit: warning: \(warning)\n")
            }
            warnings.add(export.warnings)
            for problem in export.problems {
                StandardStreams.writeError("nohit: \(problem)\n")
            }
            skipped += export.problems.count
        }
        SeasonInput.report(warnings)
        if skipped > 0 {
            StandardStreams.writeError(
                "nohit: skipped \(skipped) game\(skipped == 1 ? "" : "s") that could not be read\n")
            throw ExitCode(1)
        }
    }
}
