/// Runs by inning for both sides: the line score. A half-inning is in the line once it has begun
/// (0 when scoreless); a bottom half never batted is absent, shown as `x` once the game is over.
package struct RunsByInning: Sendable, Hashable, Codable {
    /// Runs in each half-inning begun, the first inning first.
    package private(set) var away: [Int] = []
    package private(set) var home: [Int] = []

    package init() {}

    package init(away: [Int], home: [Int]) {
        self.away = away
        self.home = home
    }

    /// The half-inning `inning` of `side` has begun.
    package mutating func begin(inning: Int, side: Side) {
        precondition(inning >= 1)
        if side == .away {
            while away.count < inning { away.append(0) }
        } else {
            while home.count < inning { home.append(0) }
        }
    }

    /// `runs` scored in `inning` by `side` (the half is begun if it was not).
    package mutating func add(_ runs: Int, inning: Int, side: Side) {
        begin(inning: inning, side: side)
        if side == .away { away[inning - 1] += runs } else { home[inning - 1] += runs }
    }

    /// The runs of `side` over every inning.
    package func total(_ side: Side) -> Int {
        (side == .away ? away : home).reduce(0, +)
    }

    /// Innings in the line (the longer side's).
    package var innings: Int { max(away.count, home.count) }

    /// The line as a person reads it: `0 1 0 ... x` per side, `x` for a bottom half not batted once
    /// the game is over (`final`), blank while it is still to come.
    package func cells(_ side: Side, final: Bool) -> [String] {
        let runs = side == .away ? away : home
        var cells = runs.map(String.init)
        while cells.count < innings { cells.append(final ? "x" : "") }
        return cells
    }
}
