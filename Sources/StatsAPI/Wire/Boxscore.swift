import Foundation

/// `liveData.boxscore` (also `v1/game/{pk}/boxscore`).
package struct Boxscore: Codable, Sendable, Hashable {
    package var teams: Teams

    package struct Teams: Codable, Sendable, Hashable {
        package var away: TeamBox
        package var home: TeamBox

        package init(away: TeamBox, home: TeamBox) {
            self.away = away
            self.home = home
        }
    }

    package struct TeamBox: Codable, Sendable, Hashable {
        package var team: Team
        /// The side's pitchers in order; the first is the starter.
        package var pitchers: [Int]
        package var battingOrder: [Int]?
        /// Keyed "ID<person id>".
        package var players: [String: Player]?

        package init(team: Team, pitchers: [Int], battingOrder: [Int]? = nil, players: [String: Player]? = nil) {
            self.team = team
            self.pitchers = pitchers
            self.battingOrder = battingOrder
            self.players = players
        }
    }

    package struct Player: Codable, Sendable, Hashable {
        package var person: Person
        package var position: FieldPosition?
        /// Every position played, in order: the first is where he started.
        package var allPositions: [FieldPosition]?
        /// "100" for the first slot's starter, "101" for its first substitute...
        package var battingOrder: String?

        package init(
            person: Person, position: FieldPosition? = nil, allPositions: [FieldPosition]? = nil,
            battingOrder: String? = nil
        ) {
            self.person = person
            self.position = position
            self.allPositions = allPositions
            self.battingOrder = battingOrder
        }
    }

    package init(teams: Teams) {
        self.teams = teams
    }
}
