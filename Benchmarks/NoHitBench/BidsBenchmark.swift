import ArgumentParser
import Foundation
import Retrosheet

/// `nohit-bench bids`: follow both no-hit bids of every game of several seasons (what `nohit
/// nohitters` and `nohit hall-of-fame` do before printing), timed in process.
struct BidsBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bids",
        abstract: "Replay seasons following every no-hit bid; print wall and CPU time, peak memory, MB/s and games/s."
    )

    @Argument(help: "Event files or season directories.")
    var paths: [String] = [
        "../shared/data/retrosheet/2012", "../shared/data/retrosheet/2015", "../shared/data/retrosheet/2019",
        "../shared/data/retrosheet/2020",
    ]

    @Option(help: "Timed iterations (after one warm-up).")
    var iterations = 5

    func run() async throws {
        let files = try EventFiles.expand(paths)
        let bytes = files.reduce(0) {
            $0 + ((try? FileManager.default.attributesOfItem(atPath: $1)[.size] as? Int) ?? 0)
        }
        let warmUp = await SeasonBids.summaries(of: files)
        var walls: [Double] = []
        var cpus: [Double] = []
        for _ in 0..<iterations {
            let cpuStart = ProcessTimes.cpuSeconds()
            let start = ContinuousClock.now
            let result = await SeasonBids.summaries(of: files)
            walls.append((ContinuousClock.now - start).seconds)
            cpus.append(ProcessTimes.cpuSeconds() - cpuStart)
            precondition(result.sides.count == warmUp.sides.count)
        }
        walls.sort()
        cpus.sort()
        let official = SeasonBids.official(warmUp.sides).count
        print(
            "workload: \(files.count) files, \(String(format: "%.1f", Double(bytes) / 1e6)) MB, \(warmUp.sides.count / 2) games, \(warmUp.sides.count) pitching sides (\(official) official no-hitters, \(warmUp.problems.count) games skipped)"
        )
        print(
            "work: read + parse + replay + follow both bids + summarise every side, \(ProcessInfo.processInfo.activeProcessorCount) threads, \(iterations) iterations after 1 warm-up"
        )
        print(String(format: "wall: best %.4f s, median %.4f s", walls[0], walls[walls.count / 2]))
        print(String(format: "cpu:  best %.4f s, median %.4f s", cpus[0], cpus[cpus.count / 2]))
        print(
            String(
                format: "throughput (best wall): %.0f MB/s, %.0f games/s", Double(bytes) / 1e6 / walls[0],
                Double(warmUp.sides.count / 2) / walls[0]))
        print("peak memory (max RSS): \(ProcessMemory.kilobytes("VmHWM") / 1024) MB")
    }
}
