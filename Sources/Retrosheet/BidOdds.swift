/// How often a bid like this one has ended as a no-hitter: for a pitching side hitless through k
/// outs (k = 3…27), the share of such sides in the seasons read that finished with an official
/// no-hitter (hitless for the whole game, 27 or more outs recorded by that side), with the number
/// of bids each figure rests on; over all seasons and by decade. Pure: made from side summaries.
package struct BidOdds: Sendable, Hashable, Codable {
    /// Sides hitless through `outs` outs, and how many of them ended as official no-hitters.
    package struct Row: Sendable, Hashable, Codable {
        package var outs: Int
        package var bids: Int
        package var noHitters: Int

        package init(outs: Int, bids: Int, noHitters: Int) {
            self.outs = outs
            self.bids = bids
            self.noHitters = noHitters
        }

        /// The share of these bids that ended as no-hitters; nil when there were none.
        package var share: Double? { bids == 0 ? nil : Double(noHitters) / Double(bids) }

        enum CodingKeys: String, CodingKey {
            case outs, bids, noHitters = "no_hitters", share
        }

        package init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            outs = try container.decode(Int.self, forKey: .outs)
            bids = try container.decode(Int.self, forKey: .bids)
            noHitters = try container.decode(Int.self, forKey: .noHitters)
        }

        package func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(outs, forKey: .outs)
            try container.encode(bids, forKey: .bids)
            try container.encode(noHitters, forKey: .noHitters)
            try container.encodeIfPresent(share.map { ($0 * 10_000).rounded() / 10_000 }, forKey: .share)
        }
    }

    /// The figures of some seasons (a decade's).
    package struct Era: Sendable, Hashable, Codable {
        package var name: String
        package var from: Int
        package var to: Int
        package var sides: Int
        package var rows: [Row]
    }

    /// The seasons the figures rest on, in order.
    package var seasons: [Int]
    /// Pitching sides read.
    package var sides: Int
    /// k = 3…27, each with its bids (every k, even with none).
    package var rows: [Row]
    /// By decade (the 1950s, …, the 2020s), each over the seasons of it that were read.
    package var eras: [Era]

    /// Outs the table covers.
    package static let outs = 3...27

    package init(seasons: [Int], sides: Int, rows: [Row], eras: [Era]) {
        self.seasons = seasons
        self.sides = sides
        self.rows = rows
        self.eras = eras
    }

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
        return BidOdds(seasons: seasons, sides: sides.count, rows: rows(sides), eras: eras)
    }

    /// The figures for a side hitless through `outs` outs (27 and more: 27's).
    package func row(outs: Int) -> Row? {
        rows.first { $0.outs == min(outs, 27) }
    }

    /// 9191 as "9,191".
    static func grouped(_ number: Int) -> String {
        let digits = Array(String(number))
        var text = ""
        for (index, digit) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { text.append(",") }
            text.append(digit)
        }
        return text
    }

    /// "1 in 4 such bids since 1950 ended as no-hitters (412 bids)".
    package func sentence(outs: Int) -> String? {
        guard let row = row(outs: outs), row.bids > 0, let first = seasons.first else { return nil }
        let since = seasons.count == 1 ? "in \(first)" : "since \(first)"
        let bids = "\(Self.grouped(row.bids)) \(row.bids == 1 ? "bid" : "bids")"
        if row.noHitters == 0 { return "none of the \(bids) like it \(since) ended as a no-hitter" }
        if row.noHitters == row.bids { return "every one of the \(bids) like it \(since) ended as a no-hitter" }
        if let share = row.share, share >= 0.5 {
            return "\(Int((share * 100).rounded()))% of the \(bids) like it \(since) ended as no-hitters"
        }
        let oneIn = (Double(row.bids) / Double(row.noHitters)).rounded()
        return "1 in \(Int(oneIn)) such bids \(since) ended as no-hitters (\(bids))"
    }
}
