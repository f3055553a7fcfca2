import ArgumentParser
import Foundation
import Retrosheet

/// `nohit-bench parse`: read, parse and replay a whole Retrosheet season, the same work as
/// `nohit events` (every play through the engine, every cwevent column formatted), timed in
/// process over several iterations.
struct ParseBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "parse",
        abstract: "Parse and replay a Retrosheet season; print wall and CPU time, peak memory, MB/s and plays/s."
    )

    @Argument(help: "Event files or season directories.")
    var paths: [String] = ["../shared/data/retrosheet/2012"]

    @Option(help: "Worker threads (files are processed in parallel).")
    var threads = ProcessInfo.processInfo.activeProcessorCount

    @Option(help: "Timed iterations (after one warm-up).")
    var iterations = 10

    @Flag(help: "Skip formatting the cwevent columns (parse and replay only).")
    var noOutput = false

    @Option(help: "A reference command to time on the same files in this run, e.g. cwevent.")
    var reference: String?

    func run() async throws {
        let files = try EventFiles.expand(paths)
        let bytes = files.reduce(0) {
            $0 + ((try? FileManager.default.attributesOfItem(atPath: $1)[.size] as? Int) ?? 0)
        }
        let format = !noOutput

        // The same pipeline as `nohit events`: files in parallel, each file's rows delivered in
        // order and dropped (here, instead of written to standard output).
        func once() async -> (plays: Int, games: Int, problems: Int) {
            var totals = (plays: 0, games: 0, problems: 0)
            await EventFiles.forEach(
                files, concurrency: threads,
                { file in
                    format ? SeasonWork.export(file) : SeasonWork.replayOnly(file)
                }
            ) { counts in
                totals.plays += counts.plays
                totals.games += counts.games
                totals.problems += counts.problems
            }
            return totals
        }

        let warmUp = await once()
        var walls: [Double] = []
        var cpus: [Double] = []
        for _ in 0..<iterations {
            let cpuStart = ProcessTimes.cpuSeconds()
            let start = ContinuousClock.now
            let counts = await once()
            let wall = (ContinuousClock.now - start).seconds
            let cpu = ProcessTimes.cpuSeconds() - cpuStart
            precondition(counts.plays == warmUp.plays, "runs disagree")
            walls.append(wall)
            cpus.append(cpu)
        }
        walls.sort()
        cpus.sort()
        let megabytes = Double(bytes) / 1_000_000
        let best = walls[0]
        let median = walls[walls.count / 2]
        print(
            "workload: \(files.count) files, \(String(format: "%.1f", megabytes)) MB, \(warmUp.games) games, \(warmUp.plays) plays (\(warmUp.problems) games skipped)"
        )
        print(
            "work: read + parse + replay every play\(format ? " + format the 29 cwevent columns" : ""), \(threads) thread(s), \(iterations) iterations after 1 warm-up"
        )
        print(String(format: "wall: best %.4f s, median %.4f s", best, median))
        print(
            String(format: "cpu:  best %.4f s, median %.4f s (user+system, all threads)", cpus[0], cpus[cpus.count / 2])
        )
        print(
            String(
                format: "throughput (best wall): %.0f MB/s, %.0f plays/s", megabytes / best, Double(warmUp.plays) / best
            ))
        print("peak memory (max RSS of the process): \(ProcessMemory.kilobytes("VmHWM") / 1024) MB")

        if let reference {
            let (referenceWalls, referenceCPUs) = try timeReference(reference, files: files)
            let (wall, cpu) = (referenceWalls[referenceWalls.count / 2], referenceCPUs[referenceCPUs.count / 2])
            print(
                String(
                    format: "reference `%@` on the same files: best %.4f s, median %.4f s wall → %.1fx (best vs best), "
                        + "%.1fx (median vs median)",
                    reference, referenceWalls[0], wall, referenceWalls[0] / best, wall / median))
            print(
                String(
                    format: "reference cpu: median %.4f s (user+system) → %.1fx the cpu of this run's median",
                    cpu, cpu / cpus[cpus.count / 2]))
        }
    }

    /// Runs `command FILES > /dev/null` `iterations` times and returns the sorted wall times and
    /// CPU times (user and system, of the shell and the command).
    private func timeReference(_ command: String, files: [String]) throws -> (walls: [Double], cpus: [Double]) {
        var times: [Double] = []
        var cpus: [Double] = []
        for _ in 0..<max(3, iterations) {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", "\(command) \(files.map { "'\($0)'" }.joined(separator: " ")) > /dev/null 2>&1"]
            let start = ContinuousClock.now
            let cpuStart = ProcessTimes.childrenCPUSeconds()
            try process.run()
            process.waitUntilExit()
            times.append((ContinuousClock.now - start).seconds)
            cpus.append(ProcessTimes.childrenCPUSeconds() - cpuStart)
        }
        return (times.sorted(), cpus.sorted())
    }
}

/// The per-file work of the benchmark.
enum SeasonWork {
    struct Counts: Sendable {
        var plays = 0
        var games = 0
        var problems = 0
    }

    static func export(_ file: String) -> Counts {
        let export = EventFileExport.export(file)
        return Counts(plays: export.plays, games: export.games, problems: export.problems.count)
    }

    static func replayOnly(_ file: String) -> Counts {
        var counts = Counts()
        guard let reader = try? EventFileReader(path: file) else {
            counts.problems += 1
            return counts
        }
        reader.forEachGame { result in
            guard case .success(let game) = result else {
                counts.problems += 1
                return
            }
            do {
                try GameReplay.run(game) { _ in counts.plays += 1 }
                counts.games += 1
            } catch {
                counts.problems += 1
            }
        }
        return counts
    }
}

extension Duration {
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
