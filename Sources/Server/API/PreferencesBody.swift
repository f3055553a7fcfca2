import Alerts
import Baseball
import Foundation

/// Preferences as the API reads them: every field optional, snake_case; what is absent keeps its
/// current (or default) value.
package struct PreferencesBody: Sendable, Codable {
    package struct QuietHours: Sendable, Codable {
        /// `HH:MM`, local time.
        package var start: String
        package var end: String
        package var timeZone: String
    }

    package var thresholdInnings: Int?
    package var favouriteTeams: [String]?
    package var favouriteThresholdInnings: Int?
    package var frequency: Preferences.Frequency?
    package var kinds: [Moment.Kind]?
    /// `null` turns quiet hours off; absent leaves them as they are.
    package var quietHours: QuietHours??
    package var spoilerDelaySeconds: Int?
    package var jinxSafe: Bool?
    /// Alerts for bids that cannot count (a 7-inning doubleheader game), saying so.
    package var unofficialBids: Bool?
    package var scoreAlerts: ScoreAlerts?
    /// The device's own names for teams; the list replaces the one before.
    package var teamNames: [TeamName]?
    /// The deal rules (ids) to be told of; the list replaces the one before.
    package var deals: [String]?
    /// `null` turns odds alerts off (back to innings); absent leaves them as they are.
    package var minOdds: Double??

    /// Score alerts for the favourite teams' games; a field left out stays as it was.
    package struct ScoreAlerts: Sendable, Codable {
        package var finalScore: Bool?
        package var gameStart: Bool?
        package var leadChange: Bool?
    }

    package struct TeamName: Sendable, Codable {
        /// MLB's abbreviation or Retrosheet's code.
        package var team: String
        package var name: String
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        thresholdInnings = try container.decodeIfPresent(Int.self, forKey: .thresholdInnings)
        favouriteTeams = try container.decodeIfPresent([String].self, forKey: .favouriteTeams)
        favouriteThresholdInnings = try container.decodeIfPresent(Int.self, forKey: .favouriteThresholdInnings)
        frequency = try container.decodeIfPresent(Preferences.Frequency.self, forKey: .frequency)
        kinds = try container.decodeIfPresent([Moment.Kind].self, forKey: .kinds)
        if container.contains(.quietHours) {
            quietHours = .some(try container.decodeIfPresent(QuietHours.self, forKey: .quietHours))
        }
        spoilerDelaySeconds = try container.decodeIfPresent(Int.self, forKey: .spoilerDelaySeconds)
        jinxSafe = try container.decodeIfPresent(Bool.self, forKey: .jinxSafe)
        unofficialBids = try container.decodeIfPresent(Bool.self, forKey: .unofficialBids)
        scoreAlerts = try container.decodeIfPresent(ScoreAlerts.self, forKey: .scoreAlerts)
        teamNames = try container.decodeIfPresent([TeamName].self, forKey: .teamNames)
        deals = try container.decodeIfPresent([String].self, forKey: .deals)
        if container.contains(.minOdds) {
            minOdds = .some(try container.decodeIfPresent(Double.self, forKey: .minOdds))
        }
    }

    package init(_ preferences: Preferences) {
        thresholdInnings = preferences.thresholdInnings
        // Answered in MLB's abbreviations, what a client sent and reads back (`CWS`, not `CHA`).
        favouriteTeams = preferences.favouriteTeams.map { TeamDirectory.current($0)?.abbreviation ?? $0 }
        favouriteThresholdInnings = preferences.favouriteThresholdInnings
        frequency = preferences.frequency
        kinds = preferences.kinds.sorted { $0.rawValue < $1.rawValue }
        quietHours = .some(
            preferences.quietHours.map {
                QuietHours(start: Self.clock($0.start), end: Self.clock($0.end), timeZone: $0.timeZone)
            })
        spoilerDelaySeconds = preferences.spoilerDelaySeconds
        jinxSafe = preferences.jinxSafe
        unofficialBids = preferences.unofficialBids
        scoreAlerts = ScoreAlerts(
            finalScore: preferences.scoreAlerts.finalScore, gameStart: preferences.scoreAlerts.gameStart,
            leadChange: preferences.scoreAlerts.leadChange)
        teamNames = preferences.teamNames.sorted { $0.key < $1.key }.map {
            TeamName(team: TeamDirectory.current($0.key)?.abbreviation ?? $0.key, name: $0.value)
        }
        deals = preferences.deals
        minOdds = .some(preferences.minOdds)
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(thresholdInnings, forKey: .thresholdInnings)
        try container.encode(favouriteTeams, forKey: .favouriteTeams)
        try container.encode(favouriteThresholdInnings, forKey: .favouriteThresholdInnings)
        try container.encode(frequency, forKey: .frequency)
        try container.encode(kinds, forKey: .kinds)
        try container.encode(quietHours ?? nil, forKey: .quietHours)
        try container.encode(spoilerDelaySeconds, forKey: .spoilerDelaySeconds)
        try container.encode(jinxSafe, forKey: .jinxSafe)
        try container.encode(unofficialBids, forKey: .unofficialBids)
        try container.encode(scoreAlerts, forKey: .scoreAlerts)
        try container.encode(teamNames, forKey: .teamNames)
        try container.encode(deals, forKey: .deals)
        try container.encode(minOdds ?? nil, forKey: .minOdds)
    }

    enum CodingKeys: String, CodingKey {
        case thresholdInnings, favouriteTeams, favouriteThresholdInnings, frequency, kinds, quietHours,
            spoilerDelaySeconds, jinxSafe, unofficialBids, scoreAlerts, teamNames, deals, minOdds
    }

    /// `base` with this body's fields applied, checked; the error names the field.
    package func applied(to base: Preferences) throws -> Preferences {
        var preferences = base
        if let thresholdInnings { preferences.thresholdInnings = thresholdInnings }
        if let favouriteTeams { preferences.favouriteTeams = favouriteTeams }
        if let favouriteThresholdInnings { preferences.favouriteThresholdInnings = favouriteThresholdInnings }
        if let frequency { preferences.frequency = frequency }
        if let kinds { preferences.kinds = Set(kinds) }
        if let quietHours {
            if let quiet = quietHours {
                for (name, value) in [("start", quiet.start), ("end", quiet.end)] where Self.minutes(value) == nil {
                    throw BodyError(
                        field: "quiet_hours.\(name)",
                        reason: value.isEmpty
                            ? "is empty: quiet hours need a start and an end, as HH:MM (23:00 to 08:00)"
                            : "'\(value)' is not a time as HH:MM (such as 23:00)")
                }
                let (start, end) = (Self.minutes(quiet.start)!, Self.minutes(quiet.end)!)
                guard start != end else {
                    throw BodyError(
                        field: "quiet_hours",
                        reason:
                            "from \(quiet.start) to \(quiet.end) is no quiet time at all: give two different times, "
                            + "or null to turn quiet hours off")
                }
                preferences.quietHours = .init(start: start, end: end, timeZone: quiet.timeZone)
            } else {
                preferences.quietHours = nil
            }
        }
        if let spoilerDelaySeconds { preferences.spoilerDelaySeconds = spoilerDelaySeconds }
        if let jinxSafe { preferences.jinxSafe = jinxSafe }
        if let unofficialBids { preferences.unofficialBids = unofficialBids }
        if let scoreAlerts {
            if let value = scoreAlerts.finalScore { preferences.scoreAlerts.finalScore = value }
            if let value = scoreAlerts.gameStart { preferences.scoreAlerts.gameStart = value }
            if let value = scoreAlerts.leadChange { preferences.scoreAlerts.leadChange = value }
        }
        if let teamNames {
            guard teamNames.count <= 30 else {
                throw BodyError(field: "team_names", reason: "at most 30 entries, not \(teamNames.count)")
            }
            // A team named twice (or by both its codes) keeps its last name; every entry is
            // checked as sent (one later replaced included).
            var names: [String: String] = [:]
            for entry in teamNames {
                _ = try Preferences.checkTeamName(team: entry.team, name: entry.name)
                if let club = TeamDirectory.current(entry.team) {
                    names = names.filter { TeamDirectory.current($0.key) != club }
                }
                names[entry.team] = entry.name
            }
            preferences.teamNames = names
        }
        if let deals { preferences.deals = deals }
        if let minOdds { preferences.minOdds = minOdds }
        return try preferences.validated()
    }

    /// `HH:MM`, two digits each (not `+23:00`, not `7:5`).
    static func minutes(_ text: String) -> Int? {
        let bytes = Array(text.utf8)
        guard bytes.count == 5, bytes[2] == UInt8(ascii: ":"),
            [0, 1, 3, 4].allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[$0]) })
        else { return nil }
        let hours = Int(bytes[0] - 48) * 10 + Int(bytes[1] - 48)
        let minutes = Int(bytes[3] - 48) * 10 + Int(bytes[4] - 48)
        guard hours < 24, minutes < 60 else { return nil }
        return hours * 60 + minutes
    }

    static func clock(_ minutes: Int) -> String {
        String(format: "%02d:%02d", minutes / 60, minutes % 60)
    }
}

/// A request body's field that cannot be taken, and why.
package struct BodyError: Error, Sendable, Hashable, CustomStringConvertible {
    package var field: String
    package var reason: String
    package var description: String { "\(field): \(reason)" }
}
