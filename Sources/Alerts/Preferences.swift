import Baseball
import Foundation

/// What a device wants to hear about, and when.
package struct Preferences: Sendable, Hashable, Codable {
    /// Alert once a bid is hitless through this many complete innings (4-9).
    package var thresholdInnings = 6
    /// Teams (codes) whose games get the earlier threshold, whether they pitch or bat.
    package var favouriteTeams: [String] = []
    /// The threshold for favourite teams' games (4-9).
    package var favouriteThresholdInnings = 4
    package var frequency = Frequency.everyInning
    /// The kinds of moment wanted. Unusual kinds are opt-in (see `Moment.Kind.isOptIn`).
    package var kinds: Set<Moment.Kind> = Moment.Kind.defaultKinds
    package var quietHours: QuietHours?
    /// Hold each alert this long (0-300 seconds), for people watching a stream that runs behind.
    package var spoilerDelaySeconds = 0
    /// Never write the word: "No-H****r".
    package var jinxSafe = false
    /// Alerts for bids that cannot count as official no-hitters whatever happens (a 7-inning
    /// doubleheader game), each saying so; on by default.
    package var unofficialBids = true
    /// Score alerts for the favourite teams' games.
    package var scoreAlerts = ScoreAlerts()
    /// Names to call teams by in this device's alerts (Retrosheet code → name), where the fan
    /// prefers another than the club's nickname.
    package var teamNames: [String: String] = [:]
    /// The deals (rule ids) this device wants an alert for when they trigger.
    package var deals: [String] = []
    /// Hear of a bid when the odds of history pass this share (0.25: once a quarter of bids like
    /// it ended as no-hitters), at the first out they do, instead of at an inning; nil: by
    /// innings. Where the service has no odds, the innings thresholds apply.
    package var minOdds: Double?

    package init() {}

    /// Which score alerts a device gets for its favourite teams' games: the final score unless
    /// turned off; the first pitch and a lead taken in the 7th inning or later when asked for.
    package struct ScoreAlerts: Sendable, Hashable, Codable {
        package var finalScore = true
        package var gameStart = false
        package var leadChange = false

        package init(finalScore: Bool = true, gameStart: Bool = false, leadChange: Bool = false) {
            self.finalScore = finalScore
            self.gameStart = gameStart
            self.leadChange = leadChange
        }

        package func wants(_ kind: Moment.Kind) -> Bool {
            switch kind {
            case .finalScore: finalScore
            case .gameStart: gameStart
            case .leadChange: leadChange
            default: false
            }
        }
    }

    /// Reads what the store wrote; preferences stored before a setting existed get its default.
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let defaults = Preferences()
        thresholdInnings = try container.decode(Int.self, forKey: .thresholdInnings)
        favouriteTeams = try container.decode([String].self, forKey: .favouriteTeams)
        favouriteThresholdInnings = try container.decode(Int.self, forKey: .favouriteThresholdInnings)
        frequency = try container.decode(Frequency.self, forKey: .frequency)
        kinds = try container.decode(Set<Moment.Kind>.self, forKey: .kinds)
        quietHours = try container.decodeIfPresent(QuietHours.self, forKey: .quietHours)
        spoilerDelaySeconds = try container.decode(Int.self, forKey: .spoilerDelaySeconds)
        jinxSafe = try container.decode(Bool.self, forKey: .jinxSafe)
        scoreAlerts = try container.decodeIfPresent(ScoreAlerts.self, forKey: .scoreAlerts) ?? defaults.scoreAlerts
        teamNames = try container.decodeIfPresent([String: String].self, forKey: .teamNames) ?? defaults.teamNames
        deals = try container.decodeIfPresent([String].self, forKey: .deals) ?? defaults.deals
        minOdds = try container.decodeIfPresent(Double.self, forKey: .minOdds)
        unofficialBids = try container.decodeIfPresent(Bool.self, forKey: .unofficialBids) ?? defaults.unofficialBids
    }

    /// Whether a bid at `moment` is past this device's threshold: its odds past `minOdds` when
    /// the device chose odds and the moment carries them, else its outs past the innings
    /// threshold for a game between `teams`.
    package func isPastThreshold(_ moment: Moment, teams: [String]) -> Bool {
        if let minOdds, let odds = moment.odds { return odds.share >= minOdds }
        return moment.outs >= thresholdOuts(teams: teams)
    }

    /// Whether a game between `teams` has one of the favourite teams in it.
    package func isFavourite(_ teams: [String]) -> Bool {
        teams.contains { team in favouriteTeams.contains { $0.caseInsensitiveCompare(team) == .orderedSame } }
    }

    package enum Frequency: String, Sendable, Hashable, Codable, CaseIterable {
        /// One alert when the bid reaches the threshold, then how it ends.
        case oncePerBid = "once-per-bid"
        /// Every complete inning past the threshold, and how it ends.
        case everyInning = "every-inning"
        /// Every inning, and also every out in the 9th.
        case everyOutInNinth = "every-out-in-ninth"
    }

    /// Quiet hours in a time zone: in-progress alerts are not sent; a completed no-hitter waits
    /// until they end.
    package struct QuietHours: Sendable, Hashable, Codable {
        /// Minutes after midnight, local time.
        package var start: Int
        package var end: Int
        /// An IANA time zone, e.g. `America/Chicago`.
        package var timeZone: String

        package init(start: Int, end: Int, timeZone: String) {
            self.start = start
            self.end = end
            self.timeZone = timeZone
        }
    }

    /// Outs a bid must reach before it is worth an alert, for a game between these teams.
    package func thresholdOuts(teams: [String]) -> Int {
        let favourite = teams.contains { team in
            favouriteTeams.contains { $0.caseInsensitiveCompare(team) == .orderedSame }
        }
        return (favourite ? min(favouriteThresholdInnings, thresholdInnings) : thresholdInnings) * 3
    }

    /// The time zones quiet hours take: IANA's names (zones and their links, such as
    /// Asia/Calcutta for Asia/Kolkata) as this system's time-zone database has them, and UTC; the
    /// API's document lists them. Read once, as `TimeZone` itself reads that database; where it has
    /// no `tzdata.zi`, Foundation's list (which lacks some zones).
    package static let timeZones: Set<String> = {
        var names = Set(TimeZone.knownTimeZoneIdentifiers)
        if let text = try? String(contentsOfFile: "/usr/share/zoneinfo/tzdata.zi", encoding: .utf8) {
            for line in text.split(separator: "\n") {
                let fields = line.split(separator: " ")
                if fields.first == "Z", fields.count > 1 { names.insert(String(fields[1])) }
                if fields.first == "L", fields.count > 2 { names.insert(String(fields[2])) }
            }
        }
        names.insert("UTC")
        return names.filter { TimeZone(identifier: $0) != nil }
    }()

    /// Checks every field; the error names the field and why.
    package func validated() throws(PreferencesError) -> Preferences {
        guard (4...9).contains(thresholdInnings) else {
            throw PreferencesError(field: "threshold_innings", reason: "must be 4 to 9, not \(thresholdInnings)")
        }
        guard (4...9).contains(favouriteThresholdInnings) else {
            throw PreferencesError(
                field: "favourite_threshold_innings", reason: "must be 4 to 9, not \(favouriteThresholdInnings)")
        }
        guard favouriteTeams.count <= 30 else {
            throw PreferencesError(field: "favourite_teams", reason: "at most 30 teams, not \(favouriteTeams.count)")
        }
        var clubs: [String] = []
        for team in favouriteTeams {
            guard let club = TeamDirectory.current(team) else {
                throw PreferencesError(
                    field: "favourite_teams",
                    reason: "'\(team)' is not an MLB club's code (MLB's, as NYY, or Retrosheet's, as NYA; upper case)")
            }
            clubs.append(club.franchise)
        }
        guard (0...300).contains(spoilerDelaySeconds) else {
            throw PreferencesError(
                field: "spoiler_delay_seconds", reason: "must be 0 to 300, not \(spoilerDelaySeconds)")
        }
        if let quiet = quietHours {
            guard (0..<1440).contains(quiet.start), (0..<1440).contains(quiet.end) else {
                throw PreferencesError(field: "quiet_hours", reason: "start and end must be minutes 0-1439")
            }
            guard Self.timeZones.contains(quiet.timeZone) else {
                throw PreferencesError(
                    field: "quiet_hours.time_zone",
                    reason: "'\(quiet.timeZone)' is not an IANA time zone name (such as America/Chicago, or UTC)")
            }
        }
        guard !kinds.isEmpty else { throw PreferencesError(field: "kinds", reason: "choose at least one kind") }
        if let score = kinds.first(where: \.isScore) {
            throw PreferencesError(
                field: "kinds", reason: "'\(score.rawValue)' is a score alert: score_alerts turns it on or off")
        }
        if kinds.contains(.deal) {
            throw PreferencesError(field: "kinds", reason: "'deal' is not a bid's moment: deals chooses the deals")
        }
        if let minOdds, !(minOdds > 0 && minOdds <= 1) {
            throw PreferencesError(
                field: "min_odds", reason: "must be a share above 0 and at most 1 (0.25 for 25 %), not \(minOdds)")
        }
        guard deals.count <= 50 else {
            throw PreferencesError(field: "deals", reason: "at most 50 deals, not \(deals.count)")
        }
        for rule in deals where !Self.isRuleID(rule) {
            throw PreferencesError(
                field: "deals", reason: "'\(rule)' is not a deal rule id (lower-case letters, digits and '-', 1-64)")
        }
        guard teamNames.count <= 30 else {
            throw PreferencesError(field: "team_names", reason: "at most 30 teams, not \(teamNames.count)")
        }
        var names: [String: String] = [:]
        for (team, name) in teamNames {
            let (club, trimmed) = try Self.checkTeamName(team: team, name: name)
            names[club.franchise] = trimmed
        }
        var normalised = self
        // Quiet from a time until the same time is no quiet time at all.
        if let quiet = quietHours, quiet.start == quiet.end { normalised.quietHours = nil }
        // Favourites are franchises (Retrosheet's ids of today: a game's club names its franchise).
        normalised.favouriteTeams = Array(Set(clubs)).sorted()
        normalised.teamNames = names
        normalised.deals = Array(Set(deals)).sorted()
        return normalised
    }

    /// A device's own name for a team, as the API document says it: an MLB club's code, and a name
    /// of 1 to 40 characters (Unicode code points, as JSON Schema counts) with no control character
    /// and not only spaces; the club and the name without its outer spaces.
    package static func checkTeamName(team: String, name: String) throws(PreferencesError) -> (
        club: Club, name: String
    ) {
        guard let club = TeamDirectory.current(team) else {
            throw PreferencesError(
                field: "team_names", reason: "'\(team)' is not an MLB club's code (such as NYY or NYA)")
        }
        let trimmed = name.trimmingCharacters(in: .whitespaces)
        guard (1...40).contains(name.unicodeScalars.count), !trimmed.isEmpty,
            !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else {
            throw PreferencesError(
                field: "team_names.\(team)", reason: "a name of 1 to 40 characters without control characters")
        }
        return (club, trimmed)
    }

    /// A deal rule's id: `papa-johns-dc-nationals`.
    package static func isRuleID(_ text: String) -> Bool {
        (1...64).contains(text.utf8.count)
            && text.utf8.allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2D }
    }
}

extension Preferences.QuietHours {
    /// Whether `date` falls in the quiet hours, and if so when they end.
    package func end(after date: Date) -> Date? {
        guard let zone = TimeZone(identifier: timeZone) else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let parts = calendar.dateComponents([.hour, .minute], from: date)
        let minute = (parts.hour ?? 0) * 60 + (parts.minute ?? 0)
        let inside = start < end ? (minute >= start && minute < end) : (minute >= start || minute < end)
        guard inside else { return nil }
        let minutesLeft = (end - minute + 1440) % 1440
        let seconds = TimeInterval(calendar.component(.second, from: date))
        let fraction = date.timeIntervalSinceReferenceDate - date.timeIntervalSinceReferenceDate.rounded(.down)
        return date.addingTimeInterval(TimeInterval(minutesLeft * 60) - seconds - fraction)
    }
}

/// A preference that does not validate: the field and why.
package struct PreferencesError: Error, Sendable, Hashable, CustomStringConvertible {
    package var field: String
    package var reason: String
    package var description: String { "\(field): \(reason)" }
}

extension Moment.Kind {
    /// Bid kinds sent unless turned off. Endings that do not count are opt-in.
    package static let defaultKinds: Set<Moment.Kind> = Set(bidKinds.filter { !$0.isOptIn })

    /// Unusual categories are opt-in, never opt-out.
    package var isOptIn: Bool { self == .endedNotOfficial }
}
