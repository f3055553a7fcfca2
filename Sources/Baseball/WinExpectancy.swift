/// How often the home team went on to win from each state of a game, counted from history: by
/// inning (1 to 9, then every extra inning as one), half, outs, runners on base and the home
/// team's lead (-10 to +10, a lead of more counted as 10). Each cell keeps what was counted (the
/// times a play began in that state and how many of those games the home team won), the
/// probability the service shows (the count, pulled toward the rate of every base-out state of
/// the same inning, half and lead by the weight of `smoothingWeight` occurrences, so a thin cell
/// says little of itself), and its leverage: how far the win probability moves on a play from
/// there, against the average play. Pure.
package struct WinExpectancy: Sendable, Hashable, Codable {
    /// A state of the game before a play.
    package struct State: Sendable, Hashable {
        package var inning: Int
        package var battingSide: Side
        package var outs: Int
        /// Runners on first (1), second (2) and third (4).
        package var bases: Int
        /// Home runs less away runs.
        package var homeLead: Int

        package init(inning: Int, battingSide: Side, outs: Int, bases: Int, homeLead: Int) {
            self.inning = inning
            self.battingSide = battingSide
            self.outs = outs
            self.bases = bases
            self.homeLead = homeLead
        }

        /// The state before the play `result`.
        package init(before result: PlayResult) {
            let runners = result.runnersBefore
            self.init(
                inning: result.inning, battingSide: result.battingSide, outs: min(result.outsBefore, 2),
                bases: (runners.first.isNone ? 0 : 1) | (runners.second.isNone ? 0 : 2)
                    | (runners.third.isNone ? 0 : 4),
                homeLead: result.scoreBefore.home - result.scoreBefore.away)
        }

        /// The cell of the table.
        package var cell: Int {
            let inning = min(max(self.inning, 1), WinExpectancy.innings) - 1
            let half = battingSide == .away ? 0 : 1
            let lead =
                min(max(homeLead, -WinExpectancy.maximumLead), WinExpectancy.maximumLead)
                + WinExpectancy.maximumLead
            return (((inning * 2 + half) * 3 + min(max(outs, 0), 2)) * 8 + (bases & 7)) * WinExpectancy.leads + lead
        }

        /// The state of `cell`.
        package init(cell: Int) {
            var rest = cell
            let lead = rest % WinExpectancy.leads - WinExpectancy.maximumLead
            rest /= WinExpectancy.leads
            let bases = rest % 8
            rest /= 8
            let outs = rest % 3
            rest /= 3
            let half = rest % 2
            self.init(
                inning: rest / 2 + 1, battingSide: half == 0 ? .away : .home, outs: outs, bases: bases, homeLead: lead)
        }
    }

    /// Innings 1 to 9, then every extra inning as the 10th.
    package static let innings = 10
    package static let maximumLead = 10
    package static let leads = 2 * maximumLead + 1
    package static let cells = innings * 2 * 3 * 8 * leads
    /// The weight, in occurrences, of a cell's inning, half and lead over every base-out state.
    package static let smoothingWeight = 20

    /// What was counted, from which seasons, and how it was smoothed.
    package var provenance: String
    /// How a cell's index is made (the arrays below are by cell).
    package var layout =
        "cell = (((inning - 1) * 2 + half) * 3 + outs) * 8 * 21 + bases * 21 + (home lead + 10); inning 1-10 (10: every "
        + "extra inning), half 0 top 1 bottom, bases: first 1 + second 2 + third 4, lead clamped to -10...10"
    /// The seasons counted.
    package var seasons: [Int]
    /// Games counted (those that ended tied are not).
    package var gamesCounted: Int
    /// Per cell: the plays that began in that state.
    package var games: [Int]
    /// Per cell: those of them in games the home team won.
    package var wins: [Int]
    /// Per cell: the home team's probability of winning, smoothed; rounded to 4 places.
    package var homeWin: [Double]
    /// Per cell: the mean change of the win probability on a play from there, against the mean
    /// over every play (1 is an average play); 0 where no play began there.
    package var leverage: [Double]

    /// The home team's chance from `state`.
    package func homeWin(_ state: State) -> Double { homeWin[state.cell] }

    /// The state of a game of `scheduledInnings` as the table's nine innings count it: a 7-inning
    /// game's 1st is counted as the 3rd.
    package static func state(
        inning: Int, battingSide: Side, outs: Int, bases: Int, homeLead: Int, scheduledInnings: Int
    ) -> State {
        State(
            inning: inning + max(0, 9 - scheduledInnings), battingSide: battingSide, outs: outs, bases: bases,
            homeLead: homeLead)
    }

    /// The home team's chance after a play that left `outs` (3: the half is over, the next begins)
    /// and `bases`, the score then `homeLead`. A walk-off, or a lead the last half cannot change,
    /// is the game won.
    package func homeWin(
        afterInning inning: Int, battingSide: Side, outs: Int, bases: Int, homeLead: Int, scheduledInnings: Int
    ) -> Double {
        let last = max(scheduledInnings, 1)
        if inning >= last && battingSide == .home && homeLead > 0 { return 1 }
        if outs >= 3 {
            if inning >= last && battingSide == .away && homeLead > 0 { return 1 }
            if inning >= last && battingSide == .home && homeLead < 0 { return 0 }
            let next = battingSide == .away ? (inning, Side.home) : (inning + 1, Side.away)
            return homeWin(
                Self.state(
                    inning: next.0, battingSide: next.1, outs: 0, bases: 0, homeLead: homeLead,
                    scheduledInnings: scheduledInnings))
        }
        return homeWin(
            Self.state(
                inning: inning, battingSide: battingSide, outs: outs, bases: bases, homeLead: homeLead,
                scheduledInnings: scheduledInnings))
    }

    package func leverage(_ state: State) -> Double { leverage[state.cell] }

    /// Counts games (each a list of the states before its plays, and whether the home team won)
    /// into a table, smoothing and leverage computed.
    package struct Counter: Sendable {
        var games = [Int](repeating: 0, count: WinExpectancy.cells)
        var wins = [Int](repeating: 0, count: WinExpectancy.cells)
        /// (cell before, cell after or `homeWon`/`awayWon`) → plays.
        var moves: [Int: Int] = [:]
        var counted = 0
        var seasons: Set<Int> = []

        package init() {}

        static let homeWon = WinExpectancy.cells
        static let awayWon = WinExpectancy.cells + 1

        /// One game: the states before its plays in order, and whether the home team won (a tied
        /// game is not counted).
        package mutating func add(season: Int, states: [State], homeWon: Bool) {
            guard !states.isEmpty else { return }
            counted += 1
            seasons.insert(season)
            let cells = states.map(\.cell)
            for (index, cell) in cells.enumerated() {
                games[cell] += 1
                if homeWon { wins[cell] += 1 }
                let next = index + 1 < cells.count ? cells[index + 1] : homeWon ? Self.homeWon : Self.awayWon
                moves[cell * (WinExpectancy.cells + 2) + next, default: 0] += 1
            }
        }

        package mutating func merge(_ other: Counter) {
            for cell in 0..<WinExpectancy.cells {
                games[cell] += other.games[cell]
                wins[cell] += other.wins[cell]
            }
            moves.merge(other.moves, uniquingKeysWith: +)
            counted += other.counted
            seasons.formUnion(other.seasons)
        }

        /// The table.
        package func table() -> WinExpectancy {
            // The prior of each cell: its inning, half and lead over every base-out state (else
            // the half and lead over every inning; else even).
            var pooled: [Int: (games: Int, wins: Int)] = [:]
            var pooledHalf: [Int: (games: Int, wins: Int)] = [:]
            for cell in 0..<WinExpectancy.cells where games[cell] > 0 {
                let state = State(cell: cell)
                for (key, table) in [(Self.group(state), 0), (Self.halfGroup(state), 1)] {
                    var sum = (table == 0 ? pooled[key] : pooledHalf[key]) ?? (0, 0)
                    sum.games += games[cell]
                    sum.wins += wins[cell]
                    if table == 0 { pooled[key] = sum } else { pooledHalf[key] = sum }
                }
            }
            let weight = Double(WinExpectancy.smoothingWeight)
            let probability = (0..<WinExpectancy.cells).map { cell -> Double in
                let state = State(cell: cell)
                let prior: Double
                if let group = pooled[Self.group(state)], group.games > 0 {
                    prior = Double(group.wins) / Double(group.games)
                } else if let group = pooledHalf[Self.halfGroup(state)], group.games > 0 {
                    prior = Double(group.wins) / Double(group.games)
                } else {
                    prior = state.homeLead > 0 ? 1 : state.homeLead < 0 ? 0 : 0.5
                }
                return (Double(wins[cell]) + weight * prior) / (Double(games[cell]) + weight)
            }
            // Leverage: the mean absolute change on a play from each cell, against all plays'.
            var swing = [Double](repeating: 0, count: WinExpectancy.cells)
            var total = 0.0
            var plays = 0
            for (key, count) in moves {
                let (from, to) = key.quotientAndRemainder(dividingBy: WinExpectancy.cells + 2)
                let after = to == Self.homeWon ? 1 : to == Self.awayWon ? 0 : probability[to]
                let change = abs(after - probability[from]) * Double(count)
                swing[from] += change
                total += change
                plays += count
            }
            let mean = plays > 0 ? total / Double(plays) : 1
            let leverage = (0..<WinExpectancy.cells).map { cell in
                games[cell] > 0 && mean > 0 ? Self.round(swing[cell] / Double(games[cell]) / mean, 3) : 0
            }
            let years = seasons.sorted()
            let span = years.count > 1 ? "\(years.first!)-\(years.last!)" : years.first.map(String.init) ?? "none"
            return WinExpectancy(
                provenance:
                    "Counted from Retrosheet's play-by-play of \(years.count) season\(years.count == 1 ? "" : "s") (\(span)), "
                    + "\(counted) games (tied games and those whose home team batted first left out): every play's "
                    + "state and whether the home team won; each "
                    + "cell pulled toward its inning, half and lead over every base-out state by the weight of "
                    + "\(WinExpectancy.smoothingWeight) plays.",
                seasons: years, gamesCounted: counted, games: games, wins: wins,
                homeWin: probability.map { Self.round($0, 4) }, leverage: leverage)
        }

        private static func group(_ state: State) -> Int {
            ((min(state.inning, WinExpectancy.innings) * 2 + (state.battingSide == .away ? 0 : 1)) * 100)
                + state.homeLead + 50
        }

        private static func halfGroup(_ state: State) -> Int {
            (state.battingSide == .away ? 0 : 1) * 100 + state.homeLead + 50
        }

        private static func round(_ value: Double, _ places: Int) -> Double {
            var scale = 1.0
            for _ in 0..<places { scale *= 10 }
            return (value * scale).rounded() / scale
        }
    }
}
