import Alerts
import ArgumentParser
import FakeStatsAPI
import Foundation
import JSON
import Retrosheet
import StatsAPI

/// `nohit-bench statsapi`: the Stats API path from a poll's JSON to the game events, per game
/// update: every game of a day served as the fake Stats API would serve it, a whole live feed every
/// `--step` seconds of game time (what a poller reads when the feed moves), read as the poller
/// reads it (JSON → document → typed feed → GUMBO translation), said once per change
/// (`StatsAPIFeedLedger`) and followed (`GameFollower`: each update applied once).
struct StatsAPIBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "statsapi",
        abstract: "The Stats API path, poll JSON → game events: CPU per game update and per poll."
    )

    @Option(help: "The day to serve.")
    var date = "2020-08-25"

    @Option(help: "Retrosheet data (the bundled 2020 season by default).")
    var data = "Data/retrosheet"

    @Option(help: "Seconds of game time between two polls of a game.")
    var step = 30.0

    @Option(help: "Timed iterations (after one warm-up).")
    var iterations = 5

    func run() async throws {
        let games = try ReplaySchedule.games(on: date, data: [data])
        let people = GumboWriter.People(games: games)
        // Set-up (not timed): each game's feed at every poll, as JSON bytes.
        var polls: [Data] = []
        let encoder = JSONEncoder()
        for game in games {
            var time = game.start
            while time <= game.end.addingTimeInterval(step) {
                polls.append(try encoder.encode(GumboWriter.feed(game, at: time, people: people)))
                time = time.addingTimeInterval(step)
            }
        }
        let bytes = polls.reduce(0) { $0 + $1.count }

        func once() throws -> (updates: Int, events: Int) {
            var ledger = StatsAPIFeedLedger()
            var followers: [String: GameFollower] = [:]
            var applied = 0
            var events = 0
            let now = Date()
            for poll in polls {
                let document = try JSONValue(parsing: poll)
                let game = try GumboGame(try document.decode(GameFeed.self))
                var follower = followers[game.gameID] ?? GameFollower(gameID: game.gameID)
                for item in ledger.items(for: game, now: now) { events += follower.follow(item).count }
                followers[game.gameID] = follower
            }
            for follower in followers.values { applied += follower.applications }
            return (applied, events)
        }

        let warmUp = try once()
        var cpus: [Double] = []
        var walls: [Double] = []
        for _ in 0..<iterations {
            let cpuStart = ProcessTimes.cpuSeconds()
            let start = ContinuousClock.now
            let result = try once()
            walls.append((ContinuousClock.now - start).seconds)
            cpus.append(ProcessTimes.cpuSeconds() - cpuStart)
            precondition(result.updates == warmUp.updates)
        }
        cpus.sort()
        walls.sort()
        let updates = Double(warmUp.updates)
        print(
            "workload: \(games.count) games of \(date) as the fake Stats API serves them, a whole live feed every "
                + "\(Int(step)) s of game time: \(polls.count) polls, \(String(format: "%.1f", Double(bytes) / 1e6)) MB "
                + "of JSON; each read (JSON → document → feed → GUMBO), said once per change, followed: "
                + "\(warmUp.updates) updates applied, \(warmUp.events) game events; \(iterations) iterations after 1 warm-up"
        )
        print(String(format: "wall: best %.3f s, median %.3f s", walls[0], walls[walls.count / 2]))
        print(String(format: "cpu:  best %.3f s, median %.3f s", cpus[0], cpus[cpus.count / 2]))
        print(
            String(
                format: "cpu per game update: median %.1f µs (best %.1f µs); per poll: median %.2f ms",
                cpus[cpus.count / 2] / updates * 1e6, cpus[0] / updates * 1e6,
                cpus[cpus.count / 2] / Double(polls.count) * 1e3))
    }
}
