import Baseball
import Foundation
import Logging
import Retrosheet
import Server

/// The odds of history the service uses: how often bids like each one finished as no-hitters.
enum HistoryOdds {
    /// Computed at start from the seasons held when they are more than the shipped table's (an
    /// operator's own Retrosheet library), else the shipped table (1950–2020); said either way.
    static func load(_ seasons: SeasonLibrary, logger: Logger) async -> BidOdds? {
        let shipped = shipped(logger: logger)
        let held = seasons.available()
        if held.count > shipped?.seasons.count ?? 0 {
            logger.notice("computing the odds of history from the seasons held", metadata: ["seasons": "\(held.count)"])
            do {
                if let computed = try await seasons.odds() {
                    logger.notice(
                        "odds of history from the seasons held",
                        metadata: [
                            "seasons": "\(computed.seasons.first ?? 0)-\(computed.seasons.last ?? 0)",
                            "sides": "\(computed.sides)",
                        ])
                    return computed
                }
            } catch {
                logger.warning(
                    "the seasons held cannot be read for the odds; the shipped table is used",
                    metadata: ["error": "\(error)"])
            }
        }
        if let shipped {
            logger.info(
                "odds of history: the shipped table",
                metadata: ["seasons": "\(shipped.seasons.first ?? 0)-\(shipped.seasons.last ?? 0)"])
        }
        return shipped
    }

    /// The shipped table of how often bids finished, 1950–2020 (`Data/odds/bid-odds.json`, found as
    /// `ShippedData` says); nil, said, when it cannot be read.
    static func shipped(logger: Logger) -> BidOdds? {
        let path = ShippedData.path("Data/odds/bid-odds.json")
        do {
            return try JSONDecoder().decode(BidOdds.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
        } catch {
            logger.error(
                "no odds on the attempt cards: the shipped table cannot be read",
                metadata: ["path": "\(path)", "error": "\(error.localizedDescription)"])
            return nil
        }
    }
}
