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
    /// By pitches thrown so far, over the sides whose games say their pitches (Retrosheet's pitch
    /// sequences, complete from the late 1980s); nil when none did.
    package var pitches: PitchTable?

    /// Outs the table covers.
    package static let outs = 3...27

    package init(seasons: [Int], sides: Int, rows: [Row], eras: [Era], pitches: PitchTable? = nil) {
        self.seasons = seasons
        self.sides = sides
        self.rows = rows
        self.eras = eras
        self.pitches = pitches
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
        let pitchTables = tables.compactMap(\.pitches)
        var pitches: PitchTable?
        if !pitchTables.isEmpty {
            let rows = Dictionary(grouping: pitchTables.flatMap(\.rows)) { [$0.outs, $0.from] }.values.map { parts in
                PitchRow(
                    outs: parts[0].outs, from: parts[0].from, to: parts[0].to, bids: parts.reduce(0) { $0 + $1.bids },
                    noHitters: parts.reduce(0) { $0 + $1.noHitters })
            }
            pitches = PitchTable(
                seasons: Set(pitchTables.flatMap(\.seasons)).sorted(), sides: pitchTables.reduce(0) { $0 + $1.sides },
                rows: rows.sorted { ($0.outs, $0.from) < ($1.outs, $1.from) })
        }
        return BidOdds(
            seasons: Set(tables.flatMap(\.seasons)).sorted(), sides: tables.reduce(0) { $0 + $1.sides },
            rows: sum(tables.map(\.rows)), eras: eras.sorted { $0.from < $1.from }, pitches: pitches)
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
        guard let row = row(outs: outs), row.bids > 0 else { return nil }
        return Self.phrase(bids: row.bids, noHitters: row.noHitters, seasons: seasons)
    }

    /// How `noHitters` of `bids` read, over `seasons`.
    static func phrase(bids count: Int, noHitters: Int, seasons: [Int]) -> String? {
        guard count > 0, let first = seasons.first else { return nil }
        let since = seasons.count == 1 ? "in \(first)" : "since \(first)"
        let bids = "\(Self.grouped(count)) \(count == 1 ? "bid" : "bids")"
        if noHitters == 0 { return "none of the \(bids) like it \(since) ended as a no-hitter" }
        if noHitters == count { return "every one of the \(bids) like it \(since) ended as a no-hitter" }
        let share = Double(noHitters) / Double(count)
        if share >= 0.5 {
            return "\(Int((share * 100).rounded()))% of the \(bids) like it \(since) ended as no-hitters"
        }
        let oneIn = (Double(count) / Double(noHitters)).rounded()
        return "1 in \(Int(oneIn)) such bids \(since) ended as no-hitters (\(bids))"
    }

    /// The by-pitches figure for a bid hitless through `outs` outs on `pitches` pitches: the row of
    /// the last complete inning it reached (the 4th to the 8th) and the range its pitches fall in.
    package func pitchChance(outs: Int, pitches: Int) -> PitchChance? {
        guard let table = self.pitches, outs >= 12 else { return nil }
        let k = min(outs / 3 * 3, 24)
        let (from, to) = Self.pitchRange(pitches)
        guard let row = table.rows.first(where: { $0.outs == k && $0.from == from }), row.bids > 0,
            let phrase = Self.phrase(bids: row.bids, noHitters: row.noHitters, seasons: table.seasons)
        else { return nil }
        let range =
            to.map { from == 0 ? "fewer than \($0 + 1) pitches" : "\(from) to \($0) pitches" }
            ?? "\(from) or more pitches"
        return PitchChance(
            outs: k, from: from, to: to, pitches: pitches, bids: row.bids, noHitters: row.noHitters,
            share: Double(row.noHitters) / Double(row.bids), since: table.seasons.first ?? 0,
            sentence: "Through \(k / 3) on \(range): \(phrase)")
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
    /// The figure for bids like it on as many pitches (kept for moments stored before a bid had
    /// one figure; no longer set).
    package var pitches: PitchChance?
    /// What the bids it rests on had in common with this one, in words: "through 8 innings on 90 to
    /// 104 pitches", "through 7 1/3 innings in the 2020s", "through 7 1/3 innings" (nil in a moment
    /// stored before a bid had one figure).
    package var basis: String?
    /// Which seasons: "since 1988", "in the 2020s".
    package var seasons: String?

    package init(
        outs: Int, bids: Int, noHitters: Int, share: Double, since: Int, sentence: String, basis: String? = nil,
        seasons: String? = nil
    ) {
        self.outs = outs
        self.bids = bids
        self.noHitters = noHitters
        self.share = share
        self.since = since
        self.sentence = sentence
        self.basis = basis
        self.seasons = seasons
    }

    /// The figure as every surface writes it: "54%" ("under 1%", "over 99%" at the edges).
    package var text: String { Self.percent(share) }

    /// What it rests on, short: "42 of 78 bids since 1988 through 8 innings on 90 to 104 pitches".
    package var base: String {
        "\(BidOdds.grouped(noHitters)) of \(BidOdds.grouped(bids)) \(bids == 1 ? "bid" : "bids") "
            + (seasons ?? "since \(since)") + (basis.map { " \($0)" } ?? "")
    }

    /// "54%": a share as a whole percentage, never rounded to 0% or 100% when it is not.
    package static func percent(_ share: Double) -> String {
        if share > 0 && share < 0.005 { return "under 1%" }
        if share < 1 && share > 0.995 { return "over 99%" }
        return "\(Int((share * 100).rounded()))%"
    }
}

extension BidOdds {
    /// A figure rests on at least this many bids: where the most specific table has fewer, a less
    /// specific one answers.
    package static let minimumBids = 50

    /// The one chance of a bid hitless through `outs` outs (on `pitches` pitches so far, where the
    /// source counts every one; in `season`), from the most specific table that rests on at least
    /// ``minimumBids`` bids: the bids as deep on as many pitches (at a complete inning, the 4th to
    /// the 8th, in the seasons scored pitch by pitch), then the bids of the game's decade, then
    /// every bid since the first season held. Nil where none does.
    package func chance(outs: Int, pitches: Int?, season: Int?) -> BidChance? {
        let words = "through " + Words.innings(outs: min(outs, 27))
        if let pitches, pitches > 0, outs % 3 == 0, BidOdds.pitchOuts.contains(outs), let table = self.pitches {
            let (from, to) = Self.pitchRange(pitches)
            if let row = table.rows.first(where: { $0.outs == outs && $0.from == from }),
                row.bids >= Self.minimumBids, let first = table.seasons.first
            {
                let range =
                    to.map { from == 0 ? "fewer than \($0 + 1) pitches" : "\(from) to \($0) pitches" }
                    ?? "\(from) or more pitches"
                return Self.figure(
                    outs: outs, bids: row.bids, noHitters: row.noHitters, since: first, seasons: "since \(first)",
                    basis: "\(words) on \(range)")
            }
        }
        if let season, let era = eras.first(where: { ($0.from / 10 * 10...$0.from / 10 * 10 + 9).contains(season) }),
            let row = era.rows.first(where: { $0.outs == min(outs, 27) }), row.bids >= Self.minimumBids
        {
            return Self.figure(
                outs: outs, bids: row.bids, noHitters: row.noHitters, since: era.from, seasons: "in the \(era.name)",
                basis: words)
        }
        guard let row = row(outs: outs), row.bids > 0, let first = seasons.first else { return nil }
        return Self.figure(
            outs: outs, bids: row.bids, noHitters: row.noHitters, since: first, seasons: "since \(first)", basis: words)
    }

    private static func figure(outs: Int, bids: Int, noHitters: Int, since: Int, seasons: String, basis: String)
        -> BidChance
    {
        let share = Double(noHitters) / Double(bids)
        var chance = BidChance(
            outs: min(outs, 27), bids: bids, noHitters: noHitters, share: share, since: since, sentence: "",
            basis: basis, seasons: seasons)
        chance.sentence = "\(chance.text): \(chance.base) ended as no-hitters"
        return chance
    }
}

extension BidOdds {
    /// Where the by-pitches ranges begin: fewer than 60, 60 to 74, ..., 120 or more.
    package static let pitchBounds = [0, 60, 75, 90, 105, 120]
    /// Outs the by-pitches table covers: the end of the 4th to the end of the 8th inning.
    package static let pitchOuts = [12, 15, 18, 21, 24]

    /// The range `pitches` fall in: its first and last (nil: and more).
    package static func pitchRange(_ pitches: Int) -> (from: Int, to: Int?) {
        let index = pitchBounds.lastIndex { $0 <= pitches } ?? 0
        return (pitchBounds[index], index + 1 < pitchBounds.count ? pitchBounds[index + 1] - 1 : nil)
    }

    /// Sides hitless through `outs` outs with their pitches then in `from`...`to`, and how many of
    /// them ended as no-hitters.
    package struct PitchRow: Sendable, Hashable, Codable {
        package var outs: Int
        package var from: Int
        package var to: Int?
        package var bids: Int
        package var noHitters: Int

        package init(outs: Int, from: Int, to: Int?, bids: Int, noHitters: Int) {
            self.outs = outs
            self.from = from
            self.to = to
            self.bids = bids
            self.noHitters = noHitters
        }

        enum CodingKeys: String, CodingKey {
            case outs, from, to, bids, noHitters = "no_hitters", share
        }

        package init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            outs = try container.decode(Int.self, forKey: .outs)
            from = try container.decode(Int.self, forKey: .from)
            to = try container.decodeIfPresent(Int.self, forKey: .to)
            bids = try container.decode(Int.self, forKey: .bids)
            noHitters = try container.decode(Int.self, forKey: .noHitters)
        }

        package func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(outs, forKey: .outs)
            try container.encode(from, forKey: .from)
            try container.encode(to, forKey: .to)
            try container.encode(bids, forKey: .bids)
            try container.encode(noHitters, forKey: .noHitters)
            if bids > 0 {
                try container.encode((Double(noHitters) / Double(bids) * 10_000).rounded() / 10_000, forKey: .share)
            }
        }
    }

    /// The by-pitches table: the seasons whose sides said their pitches, how many sides, the rows.
    package struct PitchTable: Sendable, Hashable, Codable {
        package var seasons: [Int]
        package var sides: Int
        package var rows: [PitchRow]

        package init(seasons: [Int], sides: Int, rows: [PitchRow]) {
            self.seasons = seasons
            self.sides = sides
            self.rows = rows
        }

        /// The table of sides given as (season, pitches at each out or nil, outs before the first
        /// hit, official no-hitter), over the seasons scored pitch by pitch (most of their sides
        /// with pitch counts: a few games of an older season that have them do not make it one);
        /// nil when there are none.
        package static func of(
            _ all: [(season: Int, pitchesAtOut: [Int]?, outsBeforeFirstHit: Int, official: Bool)]
        ) -> PitchTable? {
            var known: [Int: (sides: Int, pitched: Int)] = [:]
            for side in all {
                known[side.season, default: (0, 0)].sides += 1
                if side.pitchesAtOut != nil { known[side.season, default: (0, 0)].pitched += 1 }
            }
            let seasons = Set(known.filter { $0.value.pitched * 2 > $0.value.sides }.keys)
            let sides = all.compactMap { side in
                side.pitchesAtOut.flatMap { pitches in
                    seasons.contains(side.season)
                        ? (pitchesAtOut: pitches, outsBeforeFirstHit: side.outsBeforeFirstHit, official: side.official)
                        : nil
                }
            }
            guard !sides.isEmpty else { return nil }
            var counts: [[Int]: (bids: Int, noHitters: Int)] = [:]
            for side in sides {
                for k in BidOdds.pitchOuts where side.outsBeforeFirstHit >= k && side.pitchesAtOut.count >= k {
                    let key = [k, BidOdds.pitchRange(side.pitchesAtOut[k - 1]).from]
                    counts[key, default: (0, 0)].bids += 1
                    if side.official { counts[key, default: (0, 0)].noHitters += 1 }
                }
            }
            let rows = counts.map { key, value in
                PitchRow(
                    outs: key[0], from: key[1], to: BidOdds.pitchRange(key[1]).to, bids: value.bids,
                    noHitters: value.noHitters)
            }
            return PitchTable(
                seasons: seasons.sorted(), sides: sides.count,
                rows: rows.sorted { ($0.outs, $0.from) < ($1.outs, $1.from) })
        }
    }
}

/// The by-pitches figure a bid carries: through `outs` outs on `pitches` (in `from`...`to`), how
/// many such bids there were since `since` and how many ended as no-hitters; the sentence ("Through
/// 7 on 90 to 104 pitches: 1 in 4 such bids since 1988 ended as no-hitters (212 bids)").
package struct PitchChance: Sendable, Hashable, Codable {
    package var outs: Int
    package var from: Int
    package var to: Int?
    package var pitches: Int
    package var bids: Int
    package var noHitters: Int
    package var share: Double
    package var since: Int
    package var sentence: String

    package init(
        outs: Int, from: Int, to: Int?, pitches: Int, bids: Int, noHitters: Int, share: Double, since: Int,
        sentence: String
    ) {
        self.outs = outs
        self.from = from
        self.to = to
        self.pitches = pitches
        self.bids = bids
        self.noHitters = noHitters
        self.share = share
        self.since = since
        self.sentence = sentence
    }
}
