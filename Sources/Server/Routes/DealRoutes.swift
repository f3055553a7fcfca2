import Clocks
import Foundation
import Hummingbird
import Pipeline
import Scores

/// The deals: today's answer for every rule, and a season's deal days (all rules, or one).
struct DealRoutes: Sendable {
    /// None: every deal endpoint answers 404.
    let deals: DealDesk?
    let clock: any WallClock
    /// The day's games, for what a spoiler delay hides.
    let board: LiveBoard

    func add(to api: RouterGroup<APIRequestContext>) {
        api.get("deals/today") { request, _ in
            let deals = try desk()
            // Held back by a spoiler delay: the answer as it stood that long ago, without the games
            // of the board that were not over then.
            let delay = try API.delay(request)
            let then = clock.now().addingTimeInterval(-TimeInterval(delay))
            var hidden = Set<String>()
            if delay > 0 {
                let over = Set(board.all(asOf: then).filter { $0.status == .final }.map(\.id))
                hidden = Set(board.all.map(\.id)).subtracting(over)
            }
            return try API.json(DealsToday(try await deals.today(at: then, hiding: hidden)))
        }
        api.get("deals/history") { request, _ in
            let deals = try desk()
            let season = try API.season(request, now: clock.now())
            return try API.json(
                DealsHistory(try await deals.history(season: season, rule: nil, at: clock.now()), sponsor: nil))
        }
        api.get("deals/:rule/history") { request, context in
            let deals = try desk()
            let rule = try context.parameters.require("rule")
            guard let known = deals.rules.first(where: { $0.id == rule }) else {
                throw API.error(.notFound, "no deal rule '\(rule)' (GET /api/deals/today lists them)")
            }
            let season = try API.season(request, now: clock.now())
            return try API.json(
                DealsHistory(
                    try await deals.history(season: season, rule: rule, at: clock.now()), sponsor: known.sponsor))
        }
    }

    func desk() throws -> DealDesk {
        guard let deals else { throw API.error(.notFound, "this server has no deals") }
        return deals
    }
}
