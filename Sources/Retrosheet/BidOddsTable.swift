import Baseball

extension BidOdds {
    /// The table of `sides` (every pitching side of every game of the seasons read).
    package static func table(_ sides: [SideSummary]) -> BidOdds {
        func rows(_ sides: some Collection<SideSummary>) -> [Row] {
            // Sides by their outs before the first hit (27+ together), then summed from the top.
            var reached = [Int](repeating: 0, count: 29)
            var finished = [Int](repeating: 0, count: 29)
            for side in sides {
                let outs = min(side.outsBeforeFirstHit, 28)
                reached[outs] += 1
                if side.official { finished[outs] += 1 }
            }
            var result: [Row] = []
            var bids = 0
            var noHitters = 0
            for outs in stride(from: 28, through: 3, by: -1) {
                bids += reached[outs]
                noHitters += finished[outs]
                if outs <= 27 { result.append(Row(outs: outs, bids: bids, noHitters: noHitters)) }
            }
            return result.reversed()
        }
        let seasons = Set(sides.compactMap { Int($0.date.prefix(4)) }).sorted()
        let byDecade = Dictionary(grouping: sides) { (Int($0.date.prefix(4)) ?? 0) / 10 * 10 }
        let eras = byDecade.keys.sorted().map { decade in
            let years = seasons.filter { $0 / 10 * 10 == decade }
            return Era(
                name: "\(decade)s", from: years.first ?? decade, to: years.last ?? decade,
                sides: byDecade[decade]?.count ?? 0, rows: rows(byDecade[decade] ?? []))
        }
        let pitched = sides.map { side in
            (
                season: Int(side.date.prefix(4)) ?? 0, pitchesAtOut: side.pitchesAtOut,
                outsBeforeFirstHit: side.outsBeforeFirstHit, official: side.official
            )
        }
        return BidOdds(
            seasons: seasons, sides: sides.count, rows: rows(sides), eras: eras, pitches: .of(pitched))
    }

}
