import Alerts
import Baseball
import Delivery
import Foundation
import Retrosheet
import Storage
import Synchronization

/// What the web UI needs to start: the VAPID key, the seasons, what counts as an attempt.
package struct ClientConfiguration: Sendable, Codable {
    /// A club for the team pickers: MLB's abbreviation, Retrosheet's code (the id), the name.
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
    /// The thirty clubs by name.
    package var teams: [Club] = MLBTeam.all.map {
        Club(abbreviation: $0.abbreviation, code: $0.retrosheet, name: $0.name)
    }
    .sorted { $0.name < $1.name }
}

package struct AdminDeviceCounts: Sendable, Codable {
    package var total: Int
    package var active: Int
    package var activeByChannel: [String: Int]
}

/// A day's games, as `GET /api/scoreboard` gives them.
package struct Scoreboard: Sendable, Codable {
    package var date: String
    package var games: [GameSnapshot]
}

/// `GET /api/games/{id}`: the game in full, with its moments.
package struct GameTimeline: Sendable, Codable {
    package var game: GameSnapshot
    package var pitchers: GameDetail.Pitchers
    package var plays: [PlayByPlayEntry]
    package var moments: [MomentView]
}

package struct Attempt: Sendable, Codable {
    package var game: GameSnapshot
    package var bid: GameSnapshot.Bid
}

package struct HallOfFameEntry: Sendable, Codable {
    package var rank: Int
    package var side: SideSummary
}
