import Baseball
import Foundation
import Retrosheet
import Synchronization

/// Retrosheet seasons for the hall of fame: `<place>/<season>/` folders of event files or
/// Retrosheet's `<place>/<season>eve.zip`, read once per season.
package final class SeasonLibrary: Sendable {
    package let places: [String]
    private let cache = Mutex<[String: [SideSummary]]>([:])
    /// Each season's official no-hitters (small: kept for every season read, for `meaning`).
    private let officialCache = Mutex<[Int: [SideSummary]]>([:])
    private let readings = Mutex<[Int: Task<[SideSummary], any Error>]>([:])
    private let seasonReadings = Mutex<[String: Task<[SideSummary], any Error>]>([:])
    /// Pitchers' records as of a few recent days (a day's game pages all ask for the same one).
    private let recordsCache = Mutex<[(date: String, records: [String: PitcherRecord])]>([])

    package init(places: [String]) {
        self.places = places
    }

    /// The seasons some place holds (a `2020` folder or Retrosheet's `2020eve.zip`), newest first.
    package func available() -> [String] {
        let names = places.flatMap { (try? FileManager.default.contentsOfDirectory(atPath: $0)) ?? [] }
        let seasons = names.map { $0.lowercased().hasSuffix("eve.zip") ? String($0.prefix(4)) : $0 }
        return Set(seasons.filter { $0.count == 4 && $0.allSatisfy(\.isASCIIDigit) }).sorted(by: >)
    }

    /// The season's sides ranked for the hall of fame; nil when no place holds the season.
    package func hallOfFame(season: String) async throws -> [SideSummary]? {
        guard season.count == 4, season.allSatisfy(\.isASCIIDigit) else { return nil }
        if let known = cache.withLock({ $0[season] }) { return known }
        guard let year = Int(season), let folder = places.lazy.compactMap({ EventFiles.season(year, in: $0) }).first
        else { return nil }
        // Read once: callers asking while it is read (a cold server's first game pages and
        // standings) wait for that reading. A task of its own, not a child of the first caller's:
        // the callers come from different requests, and the first one's leaving (its client gone)
        // must not cancel the reading the others wait for.
        let reading = seasonReadings.withLock { readings in
            if let reading = readings[season] { return reading }
            let reading = Task<[SideSummary], any Error> {
                let (sides, _) = await SeasonBids.summaries(of: try EventFiles.expand([folder]))
                return sides
            }
            readings[season] = reading
            return reading
        }
        defer { seasonReadings.withLock { $0[season] = nil } }
        let sides = try await reading.value
        let ranked = SeasonBids.hallOfFame(sides)
        cache.withLock { $0[season] = ranked }
        officialCache.withLock { $0[year] = SeasonBids.official(sides) }
        return ranked
    }

    /// The results of a season's games, for standings; nil when no place holds the season.
    package func outcomes(season: String) async throws -> [GameOutcome]? {
        try await hallOfFame(season: season).map(SeasonBids.outcomes)
    }

    /// Each pitcher's W-L and ERA from the season's games that ended before `date` (by
    /// Retrosheet id); nil when no place holds the season.
    package func pitcherRecords(before date: String) async throws -> [String: PitcherRecord]? {
        if let known = recordsCache.withLock({ $0.first { $0.date == date }?.records }) { return known }
        guard let sides = try await hallOfFame(season: String(date.prefix(4))) else { return nil }
        let records = SeasonBids.pitcherRecords(sides, before: date)
        recordsCache.withLock { cache in
            cache.removeAll { $0.date == date }
            cache.insert((date, records), at: 0)
            if cache.count > 4 { cache.removeLast() }
        }
        return records
    }

    /// The season's official no-hitters, by date; nil when no place holds the season. Read once:
    /// callers asking while it is read wait for that reading.
    package func officials(season year: Int) async throws -> [SideSummary]? {
        if let known = officialCache.withLock({ $0[year] }) { return known }
        if let ranked = cache.withLock({ $0[String(year)] }) {
            let officials = SeasonBids.official(ranked)
            officialCache.withLock { $0[year] = officials }
            return officials
        }
        guard let folder = places.lazy.compactMap({ EventFiles.season(year, in: $0) }).first else { return nil }
        // One reading shared by every caller meanwhile (a task of its own, as `hallOfFame`'s).
        let reading = readings.withLock { readings in
            if let reading = readings[year] { return reading }
            let reading = Task<[SideSummary], any Error> {
                let (sides, _) = await SeasonBids.summaries(of: try EventFiles.expand([folder]))
                return SeasonBids.official(sides)
            }
            readings[year] = reading
            return reading
        }
        // Read, or failed: the next caller reads again (a failure is not kept).
        defer { readings.withLock { $0[year] = nil } }
        let officials = try await reading.value
        officialCache.withLock { $0[year] = officials }
        return officials
    }

    /// What a no-hitter completed on `date` in `gameID` by `franchise` means, from the seasons
    /// held up to its own (`NoHitterHistory`): read back season by season until the club's
    /// previous no-hitter.
    package func meaning(franchise: String, nickname: String, date: String, gameID: String) async -> String? {
        guard let year = Int(date.prefix(4)) else { return nil }
        var seasons: [Int: [SideSummary]] = [:]
        for season in available().compactMap({ Int($0) }).filter({ $0 <= year }).sorted(by: >) {
            guard let officials = try? await officials(season: season) else { continue }
            seasons[season] = officials
            if officials.contains(where: {
                $0.pitchingClub.franchise == franchise && ($0.date, $0.gameID) < (date, gameID)
            }) {
                break
            }
        }
        return NoHitterHistory.meaning(
            franchise: franchise, nickname: nickname, date: date, gameID: gameID, seasons: seasons)
    }

    /// Reads the no-hitters of the seasons up to `year`, newest first, so a no-hitter's meaning is
    /// ready when it completes (`serve` starts it in the background once a bid gets far).
    package func warmOfficials(through year: Int) async {
        for season in available().compactMap({ Int($0) }) where season <= year {
            _ = try? await officials(season: season)
        }
    }
}

extension SeasonLibrary {
    /// How often bids finished in the seasons held, a season at a time; nil when none is held.
    package func odds() async throws -> BidOdds? {
        var tables: [BidOdds] = []
        for season in available() {
            guard let year = Int(season), let folder = places.lazy.compactMap({ EventFiles.season(year, in: $0) }).first
            else { continue }
            let (sides, _) = await SeasonBids.summaries(of: try EventFiles.expand([folder]))
            if !sides.isEmpty { tables.append(BidOdds.table(sides)) }
            officialCache.withLock { $0[year] = SeasonBids.official(sides) }
        }
        return tables.isEmpty ? nil : BidOdds.combined(tables)
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
