import ArgumentParser
import Retrosheet

/// Reads the sides of every game of the given files, reporting unreadable games on standard
/// error (and exiting 1 after the output when there were any).
struct SeasonInput {
    var sides: [SideSummary]
    var problems: [RetrosheetError]
    var warnings: ReadingWarnings

    static func read(_ paths: [String]) async throws -> SeasonInput {
        let (sides, problems, warnings) = await SeasonBids.read(try files(paths))
        return SeasonInput(sides: sides, problems: problems, warnings: warnings)
    }

    /// Says how many damaged records were read anyway, by kind (`nohit events` prints each).
    static func report(_ warnings: ReadingWarnings) {
        if let summary = warnings.summary { StandardStreams.writeError("nohit: \(summary)\n") }
    }

    /// The event files of `paths` (files, folders, season zips); one that is not there is said on
    /// standard error, with exit status 2.
    static func files(_ paths: [String]) throws -> [String] {
        do {
            return try EventFiles.expand(paths)
        } catch {
            StandardStreams.writeError("nohit: \(error)\n")
            throw ExitCode(2)
        }
    }

    /// Reports the games that could not be read; exit status 1 when there were any.
    func finish() throws {
        Self.report(warnings)
        guard !problems.isEmpty else { return }
        for problem in problems { StandardStreams.writeError("nohit: \(problem)\n") }
        StandardStreams.writeError(
            "nohit: skipped \(problems.count) game\(problems.count == 1 ? "" : "s") that could not be read\n")
        throw ExitCode(1)
    }
}
