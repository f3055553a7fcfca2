import Alerts
import Baseball
import Foundation
import Pipeline
import Retrosheet
import Scores
import Storage
import Synchronization

/// What the web UI needs to start: the VAPID key, the seasons, what counts as an attempt.
package struct ClientConfiguration: Sendable, Codable {
    /// A club for the team pickers: MLB's abbreviation, the franchise (the id favourites keep),
    /// the name, as of the board's day.
    package struct Club: Sendable, Codable {
        package var abbreviation: String
        package var code: String
        package var name: String
    }

    package var vapidPublicKey: String?
    package var seasons: [String]
    package var attemptOuts: Int
    /// Where live games come from: `replay` (Retrosheet) or `statsapi` (MLB's Stats API), for
    /// the data notice the page shows.
    package var source = "replay"
    /// Where the page records its own views and taps (Keen's batch API on this server).
    package var analytics: Analytics?

    package struct Analytics: Sendable, Codable {
        package var projectID: String
        package var writeKey: String

        package init(projectID: String, writeKey: String) {
            self.projectID = projectID
            self.writeKey = writeKey
        }
    }
    /// The clubs of the board's day (the service's clock), by name: what the team pickers offer.
    package var teams: [Club] = []
}

/// `POST /api/admin/devices/{id}/test`: what the provider said to one test push.
package struct TestPushAnswer: Sendable, Codable {
    package var deviceId: String
    package var channel: String
    /// The push's id (APNs `apns-id`, a webhook's `webhook-id`).
    package var pushId: String
    package var accepted: Bool
    /// accepted, gone, rejected, transient, expired-provider-token, connection-lost,
    /// misconfigured, or not-sent (the channel is not configured, or takes no test).
    package var outcome: String
    /// What it means, in the operator's words.
    package var message: String

    package init(_ result: PushTest.Result) {
        deviceId = result.deviceID.uuidString.lowercased()
        channel = result.channel.rawValue
        pushId = result.pushID.uuidString.lowercased()
        accepted = result.accepted
        outcome =
            switch result.outcome {
            case nil: "not-sent"
            case .accepted: "accepted"
            case .gone: "gone"
            case .rejected: "rejected"
            case .transient: "transient"
            case .expiredProviderToken: "expired-provider-token"
            case .connectionLost: "connection-lost"
            case .notSent: "not-sent"
            case .misconfigured: "misconfigured"
            }
        message = result.summary
    }
}

package struct AdminDeviceCounts: Sendable, Codable {
    package var total: Int
    package var active: Int
    package var activeByChannel: [String: Int]
}

/// `GET /api/admin/projects`: the analytics projects, and the one the Metrics page shows when none
/// is asked for (the web app's own).
package struct AdminProjects: Sendable, Codable {
    package struct Project: Sendable, Codable {
        package var id: String
        package var name: String
    }

    package var projects: [Project]
    package var `default`: String?
}

/// `GET /api/admin/deliveries/failed`: the deliveries that failed, newest first, and how many by
/// channel and reason.
package struct AdminFailedDeliveries: Sendable, Codable {
    package struct Delivery: Sendable, Codable {
        package var deliveryId: String
        package var deviceId: String
        package var channel: String
        package var reason: String
        package var failedAt: Date
        package var momentId: String
        package var attempts: Int
        /// `active`, `disabled` (a device the provider said was gone is pruned: disabled with the
        /// reason) or `removed`.
        package var device: String
    }

    package struct Count: Sendable, Codable {
        package var channel: String
        package var reason: String
        package var count: Int
    }

    package var failed: Int
    package var counts: [Count]
    package var recent: [Delivery]

    init(_ failed: FailedDeliveries, total: Int) {
        self.failed = total
        counts = failed.counts.map { Count(channel: $0.channel, reason: $0.reason, count: $0.count) }
        recent = failed.recent.map {
            Delivery(
                deliveryId: $0.deliveryID.uuidString.lowercased(), deviceId: $0.deviceID.uuidString.lowercased(),
                channel: $0.channel, reason: $0.reason, failedAt: $0.failedAt, momentId: $0.momentID,
                attempts: $0.attempts,
                device: $0.deviceActive.map { $0 ? "active" : "disabled" } ?? "removed")
        }
    }
}

/// A day's games, as `GET /api/scoreboard` gives them.
package struct Scoreboard: Sendable, Codable {
    package var date: String
    package var games: [GameSnapshot]
}

extension Scoreboard {
    /// The games of a scoreboard: the day's; on the default board (no date asked), also the day
    /// before's games still under way, and those finished less than `keepFinished` ago (the late
    /// games of last night), first.
    package static func games(
        _ games: [GameSnapshot], day: String, asked: Bool, now: Date, keepFinished: TimeInterval
    ) -> [GameSnapshot] {
        let today = games.filter { $0.date == day }
        guard !asked, let previous = games.map(\.date).filter({ $0 < day }).max() else { return today }
        let late = games.filter {
            $0.date == previous
                && ($0.status == .live || ($0.status == .final && now.timeIntervalSince($0.updatedAt) < keepFinished))
        }
        return late + today
    }
}

/// `GET /api/games/{id}`: the game in full, with its moments.
package struct GameTimeline: Sendable, Codable {
    package var game: GameSnapshot
    /// Before the first pitch: where and when, the probable pitchers with their records, the
    /// lineups once out.
    package var pregame: Pregame?
    package var pitchers: GameDetail.Pitchers
    package var box: BoxScoreView
    package var scoring: [PlayByPlayEntry]
    package var plays: [PlayByPlayEntry]
    package var moments: [MomentView]
}

/// What a game page shows before the first pitch.
package struct Pregame: Sendable, Codable {
    package struct Pitcher: Sendable, Codable {
        package var id: String
        package var name: String
        /// His W-L and ERA before the day, from the season's games the server holds; nil without.
        package var wins: Int?
        package var losses: Int?
        package var era: String?
    }

    package struct Batter: Sendable, Codable {
        package var slot: Int
        package var name: String
        /// `SS`, `DH`.
        package var position: String
    }

    package struct Team: Sendable, Codable {
        package var team: String
        package var pitcher: Pitcher?
        /// The batting order, once the lineups are out.
        package var lineup: [Batter]
    }

    package var firstPitch: Date
    package var venue: String?
    /// Whether the pitchers are the lineups' starters (else the schedule's probables).
    package var confirmed: Bool
    package var away: Team
    package var home: Team
}

/// `GET /api/standings`: the division standings before a day's games, and what they were counted
/// from.
package struct StandingsAnswer: Sendable, Codable {
    package var date: String
    /// "Retrosheet's 2020 season", or "the games this service followed" when it holds no
    /// season's results (then only those games count).
    package var source: String
    package var divisions: [Standings.Division]
    /// The race for the postseason in each league (the season's format); absent before 1994.
    package var wildCards: WildCardRace?
}

package struct Attempt: Sendable, Codable {
    package var game: GameSnapshot
    package var bid: GameSnapshot.Bid
}

/// One side of the hall of fame, as the web app shows it: clubs as they were that season, the
/// bid's pitchers by name, how it ended in words.
package struct HallOfFameEntry: Sendable, Codable {
    package var rank: Int
    package var gameId: String
    /// yyyy-mm-dd.
    package var date: String
    package var pitchingTeam: Club.View
    package var battingTeam: Club.View
    /// The bid's pitchers, by name.
    package var pitchers: [String]
    package var outsBeforeFirstHit: Int
    /// "8 2/3 innings".
    package var hitless: String
    package var battersReached: Int
    package var official: Bool
    package var perfect: Bool
    /// "No-hitter", "Perfect game", "Eric Sogard singles to center field off Kenta Maeda with
    /// nobody out in the top of the 9th", "Hitless, not official: rain".
    package var ending: String
    /// Why it did not or could not count as an official no-hitter, where that is so: "7-inning
    /// doubleheader game", "shortened game".
    package var wontCount: String?

    package init(rank: Int, side: SideSummary) {
        self.rank = rank
        gameId = side.gameID
        date = side.date
        pitchingTeam = side.pitchingClub.view
        battingTeam = side.battingClub.view
        pitchers = side.bidPitchers.map { id in
            side.pitchers.firstIndex(of: id).map { side.pitcherNames[$0] } ?? id
        }
        outsBeforeFirstHit = side.outsBeforeFirstHit
        hitless = Words.innings(outs: side.outsBeforeFirstHit)
        battersReached = side.battersReachedWhileHitless
        official = side.official
        perfect = side.perfect
        let extra = side.unofficialReason == .brokenInExtraInnings ? " (hitless through 9, not official)" : ""
        let ending = side.official ? side.ending : side.firstHit.map { $0.words + extra } ?? side.ending
        self.ending = ending.prefix(1).uppercased() + ending.dropFirst()
        wontCount = side.cannotCount.map { MessageStrings.english.reasons[$0] ?? $0.rawValue }
    }
}

extension MomentView {
    /// A stored moment with its alert's words (as an English device without a jinx-safe wording
    /// would read them).
    package init(_ stored: StoredMoment) {
        self.init(
            stored.moment, game: stored.game, message: MessageText.render(stored.moment, game: stored.game),
            occurredAt: stored.occurredAt)
    }
}
