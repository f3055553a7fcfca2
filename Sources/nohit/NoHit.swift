import ArgumentParser

@main
struct NoHit: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "nohit",
        abstract: "No-Hitter Alerts: live no-hit bid alerts, replays and Retrosheet tools.",
        subcommands: [
            EventsCommand.self, NoHittersCommand.self, HallOfFameCommand.self, DealsCommand.self, ReplayCommand.self,
            DevicesCommand.self, AnalyticsCommand.self, FakeAPNsCommand.self, FakeStatsAPICommand.self,
            ServeCommand.self,
        ]
    )
}
