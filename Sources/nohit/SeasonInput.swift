import ArgumentParser
import Foundation
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
        var files: [String] = []
        for path in paths {
            let found: [String]
            do {
                found = try EventFiles.expand([path])
            } catch {
                StandardStreams.writeError("nohit: \(error)\n")
                throw ExitCode(2)
            }
            // A path that holds no event file is named, not passed over.
            guard !found.isEmpty else {
                // A folder of season folders (Data/retrosheet): name its seasons.
                let base = URL(fileURLWithPath: path)
                let seasons = ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted().filter {
                    let inner = base.appendingPathComponent($0).path
                    var isDirectory: ObjCBool = false
                    guard FileManager.default.fileExists(atPath: inner, isDirectory: &isDirectory),
                        isDirectory.boolValue || ZipArchive.isArchive(inner)
                    else { return false }
                    return (try? EventFiles.expand([inner]).isEmpty) == false
                }
                let hint =
                    seasons.isEmpty
                    ? ""
                    : "; it holds season folders: give one or more, such as "
                        + base.appendingPathComponent(seasons[0]).path
                StandardStreams.writeError(
                    "nohit: \(path): no Retrosheet event files in it (.EVA, .EVN, .EVE, .EVF, .EVR, or a season's "
                        + "zip such as 2012eve.zip)\(hint)\n")
                throw ExitCode(2)
            }
            files += found
        }
        return files
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
