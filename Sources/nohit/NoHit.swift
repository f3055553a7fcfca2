import ArgumentParser
import Assembly
import Server

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Ends the process with `status`.
private func terminate(_ status: Int32) -> Never {
    #if canImport(Glibc)
        Glibc.exit(status)
    #else
        Darwin.exit(status)
    #endif
}

@main
struct NoHit: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "nohit",
        abstract: "No-Hitter Alerts: live no-hit bid alerts, replays and Retrosheet tools.",
        version: BuildInfo.summary,
        subcommands: [
            EventsCommand.self, NoHittersCommand.self, HallOfFameCommand.self, DealsCommand.self, ReplayCommand.self,
            BoxCommand.self, StandingsCommand.self,
            DevicesCommand.self, AnalyticsCommand.self, BackupCommand.self, RestoreCommand.self, PushCommand.self,
            FakeAPNsCommand.self,
            FakeStatsAPICommand.self,
            ServeCommand.self, SettingsCommand.self, OpenAPICommand.self, OddsCommand.self, WinExpCommand.self,
        ]
    )

    /// `--count -5` as `--count=-5`: ArgumentParser reads a value starting with '-' as the next
    /// option (and says the value is missing); no option of nohit is named like a number, so a
    /// negative number after an option is its value, which the command then names as out of range.
    static func joiningNegativeNumbers(_ arguments: [String]) -> [String] {
        var joined: [String] = []
        for argument in arguments {
            if let last = joined.last, last.hasPrefix("--"), last != "--", !last.contains("="),
                argument.wholeMatch(of: /-(\d+(\.\d*)?|\.\d+|inf|infinity|nan)/.ignoresCase()) != nil
            {
                joined[joined.count - 1] = "\(last)=\(argument)"
            } else {
                joined.append(argument)
            }
        }
        return joined
    }

    /// ArgumentParser's `main`, but a setting found wrong once the command runs (in a file, the
    /// environment, a flag's value checked against the others) is said as `nohit: ...` with exit
    /// status 2, as every other failure of a running command is, not followed by the usage text
    /// (which is for a command line that does not parse).
    static func main() async {
        let command: any ParsableCommand
        do {
            command = try parseAsRoot(Self.joiningNegativeNumbers(Array(CommandLine.arguments.dropFirst())))
        } catch {
            exit(withError: error)
        }
        do {
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                var command = command
                try command.run()
            }
        } catch let error as ValidationError {
            StandardStreams.writeError("nohit: \(error.message)\n")
            terminate(2)
        } catch let error as StartError {
            StandardStreams.writeError("nohit: \(error)\n")
            terminate(2)
        } catch {
            exit(withError: error)
        }
    }
}
