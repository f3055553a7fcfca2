import Alerts
import Baseball
import Delivery
import Foundation
import Retrosheet
import Storage
import Synchronization

/// Retrosheet seasons for the hall of fame: `<place>/<season>/` folders of event files or
/// Retrosheet's `<place>/<season>eve.zip`, read once per season.
package final class SeasonLibrary: Sendable {
    package let places: [String]
    private let cache = Mutex<[String: [SideSummary]]>([:])

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
        let (sides, _) = await SeasonBids.summaries(of: try EventFiles.expand([folder]))
        let ranked = SeasonBids.hallOfFame(sides)
        cache.withLock { $0[season] = ranked }
        return ranked
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
        }
        return tables.isEmpty ? nil : BidOdds.combined(tables)
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
