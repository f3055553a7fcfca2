/// How often a bid like this one has ended as a no-hitter: for a pitching side hitless through k
/// outs (k = 3…27), the share of such sides in the seasons read that finished with an official
/// no-hitter (hitless for the whole game, 27 or more outs recorded by that side), with the number
/// of bids each figure rests on; over all seasons and by decade. Pure: Retrosheet makes it from side
/// summaries (`BidOdds.table`), the server ships one (`Data/odds`).
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

        package init(name: String, from: Int, to: Int, sides: Int, rows: [Row]) {
            self.name = name
            self.from = from
            self.to = to
            self.sides = sides
            self.rows = rows
        }
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

    /// Tables of different seasons as one (their counts added): a season at a time keeps only
    /// one season's sides in memory.
    package static func combined(_ tables: [BidOdds]) -> BidOdds {
        func sum(_ lists: [[Row]]) -> [Row] {
            outs.map { k in
                let rows = lists.compactMap { $0.first { $0.outs == k } }
                return Row(
                    outs: k, bids: rows.reduce(0) { $0 + $1.bids }, noHitters: rows.reduce(0) { $0 + $1.noHitters })
            }
        }
        let eras = Dictionary(grouping: tables.flatMap(\.eras), by: \.name).values.map { parts in
            Era(
                name: parts[0].name, from: parts.map(\.from).min() ?? 0, to: parts.map(\.to).max() ?? 0,
                sides: parts.reduce(0) { $0 + $1.sides }, rows: sum(parts.map(\.rows)))
        }
        return BidOdds(
            seasons: Set(tables.flatMap(\.seasons)).sorted(), sides: tables.reduce(0) { $0 + $1.sides },
            rows: sum(tables.map(\.rows)), eras: eras.sorted { $0.from < $1.from })
    }

    /// The figures for a side hitless through `outs` outs (27 and more: 27's).
    package func row(outs: Int) -> Row? {
        rows.first { $0.outs == min(outs, 27) }
    }

    /// 9191 as "9,191".
    package static func grouped(_ number: Int) -> String {
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

    /// What a bid hitless through `outs` outs carries (moments, alerts, the stream): the figures
    /// and the sentence; nil where the table has no such bids.
    package func chance(outs: Int) -> BidChance? {
        guard let row = row(outs: outs), let share = row.share, let sentence = sentence(outs: outs),
            let since = seasons.first
        else { return nil }
        return BidChance(
            outs: row.outs, bids: row.bids, noHitters: row.noHitters, share: share, since: since, sentence: sentence)
    }
}

/// How often bids like one hitless through `outs` outs ended as no-hitters, in the seasons known
/// (since `since`): the share, the counts it rests on, and the sentence a fan reads ("1 in 4 such
/// bids since 1950 ended as no-hitters (798 bids)").
package struct BidChance: Sendable, Hashable, Codable {
    package var outs: Int
    package var bids: Int
    package var noHitters: Int
    package var share: Double
    package var since: Int
    package var sentence: String

    package init(outs: Int, bids: Int, noHitters: Int, share: Double, since: Int, sentence: String) {
        self.outs = outs
        self.bids = bids
        self.noHitters = noHitters
        self.share = share
        self.since = since
        self.sentence = sentence
    }
}
