import Baseball
import Foundation

/// Win expectancy counted from event files: every game replayed, the state before each of its
/// plays and whether the home team won.
package enum WinExpectancyCount {
    /// The table of `files`, with the games that could not be read and the damaged records read
    /// anyway.
    package static func table(of files: [String]) async -> (
        table: WinExpectancy, problems: [RetrosheetError], warnings: ReadingWarnings
    ) {
        var counter = WinExpectancy.Counter()
        var problems: [RetrosheetError] = []
        var warnings = ReadingWarnings()
        await EventFiles.forEach(files, { file in count(file) }) { file in
            counter.merge(file.0)
            problems += file.1
            warnings.add(file.2)
        }
        return (counter.table(), problems, warnings)
    }

    /// One file's games.
    static func count(_ file: String) -> (WinExpectancy.Counter, [RetrosheetError], ReadingWarnings) {
        var counter = WinExpectancy.Counter()
        var problems: [RetrosheetError] = []
        var warnings = ReadingWarnings()
        let reader: EventFileReader
        do throws(RetrosheetError) {
            reader = try EventFileReader(path: file)
        } catch {
            return (counter, [error], warnings)
        }
        reader.forEachGame { result in
            do throws(RetrosheetError) {
                let game = try result.get()
                warnings.add(game.warnings)
                // A game whose home team batted first (a few at neutral sites) is left out: the
                // table's halves are the visitors' and the home team's, who bats last.
                guard !game.homeBatsFirst else { return }
                var states: [WinExpectancy.State] = []
                states.reserveCapacity(game.events.count)
                // A 7-inning game's innings counted as the 3rd to the 9th, as the board reads them.
                let shift = max(0, 9 - game.scheduledInnings)
                let engine = try GameReplay.run(game) {
                    var state = WinExpectancy.State(before: $0.result)
                    state.inning += shift
                    states.append(state)
                }
                let score = engine.state.score
                guard score.home != score.away, let season = Int((game.date ?? "").prefix(4)) else { return }
                counter.add(season: season, states: states, homeWon: score.home > score.away)
            } catch {
                problems.append(error)
            }
        }
        return (counter, problems, warnings)
    }
}

extension WinExpectancyCount {
    /// The table nohit ships (`Data/winexp/win-expectancy.json`, 1950-2020), or why it cannot be
    /// read.
    package static func shipped() -> Result<WinExpectancy, any Error> {
        let path = ShippedData.path("Data/winexp/win-expectancy.json")
        return Result {
            let decoder = JSONDecoder()
            decoder.keyDecodingStrategy = .convertFromSnakeCase
            let table = try decoder.decode(WinExpectancy.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
            let sizes = [table.games.count, table.wins.count, table.homeWin.count, table.leverage.count]
            guard sizes.allSatisfy({ $0 == WinExpectancy.cells }) else {
                throw RetrosheetError(
                    file: path, line: 0, text: "",
                    reason: "the table has \(sizes) cells, not \(WinExpectancy.cells) each")
            }
            return table
        }
    }
}
