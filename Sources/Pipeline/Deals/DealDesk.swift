import Alerts
import Deals
import Foundation
import Logging
import Retrosheet
import ServiceLifecycle
import Storage

/// The deals of the running service: evaluates each game the moment it is final (and again on a
/// re-scoring), stores the game and its triggers (each once, by its deterministic id), publishes
/// one deal alert per rule and deal day through the same planner and outbox as every alert, and
/// answers "is it on today?" and a season's history.
///
/// The book that "first in a series" needs is seeded, on a season's first game, with the final
/// games the store already holds for it, so a restart evaluates as the first run did.
package actor DealDesk {
    package nonisolated let rules: [DealRule]
    private let store: any DealStore
    private let publisher: MomentPublisher?
    /// The folder or zip of a past season's event files (for histories): none when the service
    /// has no Retrosheet data for it.
    private let seasonFiles: @Sendable (Int) -> [String]
    private let logger: Logger
    private var book: DealBook
    private var seeded: Set<Int> = []
    private var history: [Int: [DealTrigger]] = [:]
    /// The season's games from its event files (for why a day is not a deal day).
    private var historyGames: [Int: [DealGame]] = [:]
    private let byVersion: [String: DealRule]

    package init(
        rules: [DealRule], store: any DealStore, publisher: MomentPublisher?,
        seasonFiles: @escaping @Sendable (Int) -> [String] = { _ in [] }, logger: Logger = Logger(label: "nohit.deals")
    ) {
        self.rules = rules
        self.store = store
        self.publisher = publisher
        self.seasonFiles = seasonFiles
        self.logger = logger
        book = DealBook(rules: rules)
        byVersion = Dictionary(rules.map { ($0.versionedID, $0) }, uniquingKeysWith: { a, _ in a })
    }

    package struct Outcome: Sendable, Hashable {
        package var triggers: [DealTrigger]
        /// Triggers stored for the first time.
        package var new: Int
        /// Deal alerts written to the outbox for the first time (0 when the day was announced).
        package var alerts: Int
    }

    /// A game ended (or a final game was re-scored): evaluate it.
    @discardableResult
    package func gameEnded(_ follower: GameFollower, at time: Date) async throws -> Outcome {
        guard let game = DealGame(follower: follower) else { return Outcome(triggers: [], new: 0, alerts: 0) }
        try await seed(game.season)
        try await store.saveDealGame(
            StoredDealGame(gameID: game.gameID, dealDate: game.dealDate, body: try Self.encoder.encode(game)))
        let triggers = book.evaluate(game)
        // A trigger of this game already stored and no longer met (a scoring change) is kept, with
        // the revision recorded.
        let stored = try await store.dealTriggers(ruleID: nil, from: game.dealDate, through: game.dealDate)
            .filter { $0.gameID == game.gameID }
        let now = Set(triggers.map(\.id))
        let at = ISO8601DateFormatter().string(from: time)
        for old in stored where !now.contains(old.id) {
            let revision: [String: String] = [
                "at": at, "score": game.score,
                "note": "a scoring change: the game no longer meets the rule; the trigger stands",
            ]
            try await store.recordTriggerRevision(id: old.id, revision: try Self.encoder.encode(revision))
        }
        var outcome = Outcome(triggers: triggers, new: 0, alerts: 0)
        for trigger in triggers {
            let body = try Self.encoder.encode(trigger)
            let isNew = try await store.recordTrigger(
                StoredDealTrigger(
                    id: trigger.id, ruleID: trigger.ruleID, version: trigger.version, gameID: trigger.gameID,
                    dealDate: trigger.dealDate, createdAt: time, body: body))
            if isNew {
                outcome.new += 1
            } else if stored.contains(where: { $0.id == trigger.id && $0.body != body }) {
                let revision: [String: String] = [
                    "at": at, "score": game.score, "why": trigger.why,
                    "note": "a scoring change after the trigger; the trigger stands",
                ]
                try await store.recordTriggerRevision(id: trigger.id, revision: try Self.encoder.encode(revision))
            }
            // Published every time it is derived: the outbox keeps the moment once (its id is the
            // rule's and the deal day's), so a crash between the trigger and its alert loses
            // nothing, and a doubleheader's second trigger adds nothing.
            guard let publisher, let rule = byVersion["\(trigger.ruleID)@\(trigger.version)"] else { continue }
            let moment = Moment.deal(
                trigger.notice(rule), gameID: game.gameID, score: game.runs, inning: game.innings)
            if try await publisher.publish(moment, game: follower.info, at: time).isNew { outcome.alerts += 1 }
        }
        return outcome
    }

    /// Loads the season's final games already stored, in order, into the book.
    private func seed(_ season: Int) async throws {
        guard seeded.insert(season).inserted else { return }
        let games = try await store.dealGames(from: "\(season)-01-01", through: "\(season)-12-31")
            .compactMap { stored in decoded(DealGame.self, stored.body, what: "deal game \(stored.gameID)") }
        for game in games.sorted(by: SeasonDeals.order) { _ = book.evaluate(game) }
    }

    /// What every rule in force says for today, in each rule's own time zone.
    /// `hidden`: games whose result is not to be told yet (over on the board, but not as long ago
    /// as a spoiler delay asks): neither their triggers nor their scores count.
    package func today(at now: Date, hiding hidden: Set<String> = []) async throws -> [TodayAnswer] {
        var answers: [TodayAnswer] = []
        // A season's triggers are read once however many rules ask (near New Year, two seasons).
        var bySeason: [Int: [DealTrigger]] = [:]
        // The final games before a day are read once however many rules say no for it.
        var gamesBefore: [String: [DealGame]] = [:]
        for rule in book.latestRules {
            let day = DealCalendar.localDate(now, in: rule.timeZone)
            let season = Int(day.prefix(4)) ?? 0
            let current = book.rules(on: day).first { $0.id == rule.id } ?? rule
            if bySeason[season] == nil { bySeason[season] = try await triggers(season: season, now: now) }
            let triggers = (bySeason[season] ?? []).filter {
                $0.ruleID == rule.id && $0.redeemDays.contains(day) && !hidden.contains($0.gameID)
            }
            var whyNot: String?
            if triggers.isEmpty {
                if gamesBefore[day] == nil {
                    gamesBefore[day] = try await finalGames(before: day, season: season, now: now).filter {
                        !hidden.contains($0.gameID)
                    }
                }
                whyNot = DealBook.whyNot(current, day: day, games: gamesBefore[day] ?? [])
            }
            answers.append(TodayAnswer(rule: current, day: day, triggers: triggers, whyNot: whyNot))
        }
        return answers
    }

    /// The final games of the week before `day` (and of `day` itself so far): those stored and,
    /// from the season's event files, those over before today.
    private func finalGames(before day: String, season: Int, now: Date) async throws -> [DealGame] {
        let from = DealCalendar.adding(-7, to: day)
        let stored = try await store.dealGames(from: from, through: day)
            .compactMap { stored in decoded(DealGame.self, stored.body, what: "deal game \(stored.gameID)") }
        let today = DealCalendar.localDate(now, in: "America/New_York")
        let ids = Set(stored.map(\.gameID))
        let past = (historyGames[season] ?? []).filter {
            $0.dealDate >= from && $0.dealDate <= day && $0.dealDate < today && !ids.contains($0.gameID)
        }
        return stored + past
    }

    /// A season's history, of one rule or all.
    package func history(season: Int, rule: String?, at now: Date) async throws -> DealHistory {
        DealHistory(triggers: try await triggers(season: season, now: now), season: season, rule: rule)
    }

    /// The season's triggers: those stored (games this service followed) and, where it has the
    /// season's Retrosheet files, those of the games they hold that were over before today (a
    /// replayed day's own games count when the replay plays them, not before).
    private func triggers(season: Int, now: Date) async throws -> [DealTrigger] {
        let stored = try await store.dealTriggers(ruleID: nil, from: "\(season)-01-01", through: "\(season + 1)-01-31")
            .compactMap { stored in decoded(DealTrigger.self, stored.body, what: "deal trigger \(stored.id)") }
        if history[season] == nil {
            var games: [DealGame] = []
            let places = seasonFiles(season)
            if !places.isEmpty {
                do {
                    games = await SeasonDeals.games(of: try EventFiles.expand(places)).games
                } catch {
                    logger.warning(
                        "the season's event files cannot be read: its history holds only the games followed here",
                        metadata: ["season": "\(season)", "error": "\(error)"])
                }
            }
            history[season] = SeasonDeals.triggers(games, rules: rules)
            historyGames[season] = games
        }
        let today = DealCalendar.localDate(now, in: "America/New_York")
        let past = (history[season] ?? []).filter { $0.dealDate < today }
        let ids = Set(stored.map(\.id))
        return stored + past.filter { !ids.contains($0.id) }
    }

    /// A stored row read back; one that no longer reads (written by another version) is left out
    /// and said.
    private func decoded<Value: Decodable>(_ type: Value.Type, _ body: Data, what: String) -> Value? {
        do {
            return try Self.decoder.decode(type, from: body)
        } catch {
            logger.error(
                "a stored row cannot be read; it is left out", metadata: ["row": "\(what)", "error": "\(error)"])
            return nil
        }
    }

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }()
    static let decoder = JSONDecoder()
}

/// One rule's answer for today.
package struct TodayAnswer: Sendable, Hashable {
    package var rule: DealRule
    /// Today in the rule's time zone.
    package var day: String
    /// The triggers that make today a deal day (empty: no).
    package var triggers: [DealTrigger]
    /// Why today is not a deal day, in words (nil when it is): "the Nationals lost 3-5 yesterday".
    package var whyNot: String? = nil
    package var isOn: Bool { !triggers.isEmpty }
}

/// Hands each game's end (and a final game's re-scoring) to the deal desk.
package struct DealConsumer: GameChangeConsumer {
    package let desk: DealDesk
    /// A game's end the database refuses for a fault of the machine (a full disk) is tried again
    /// until it is stored.
    package let storage: StorageHealth

    package init(desk: DealDesk, storage: StorageHealth = StorageHealth()) {
        self.desk = desk
        self.storage = storage
    }

    package func consume(_ change: GameChange) async throws {
        let ends = change.events.contains {
            switch $0 {
            case .final: true
            case .revision: change.game.isFinal
            default: false
            }
        }
        guard ends else { return }
        do {
            _ = try await storage.persist("a game's end for the deals", stopping: { Task.isShuttingDownGracefully }) {
                try await desk.gameEnded(change.game, at: change.time)
            }
        } catch is StorageFault {
            // Stopping while the database takes nothing: the game's end is derived again at the next start.
            throw CancellationError()
        }
    }
}
