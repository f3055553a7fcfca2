import ArgumentParser

/// Benchmarks of No-Hitter Alerts. Build in release mode: `Benchmarks/run ARGS`.
@main
struct NoHitBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "nohit-bench",
        abstract: "No-Hitter Alerts benchmarks (run through Benchmarks/run, which builds in release mode).",
        subcommands: [
            ParseBenchmark.self, BidsBenchmark.self, FanoutBenchmark.self, SSEBenchmark.self, SSEClientsCommand.self,
            StatsAPIBenchmark.self, IdleBenchmark.self, WidgetBenchmark.self, AnalyticsBenchmark.self,
            SSEInstancesBenchmark.self, SpinCommand.self, HostileBenchmark.self, LatencyBenchmark.self,
            LiveActivityBenchmark.self,
        ]
    )
}
