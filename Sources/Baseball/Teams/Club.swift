/// A club as it was on a day: its names, its codes (MLB's and Retrosheet's), MLB's id, its
/// league and division. The Montreal Expos of 1994 are `MON`/`MON`, franchise `WAS`, MLB id 120,
/// NL East; the 2020 Indians are `CLE`, the 2022 Guardians `CLE` too. Every surface names a club
/// through this (``TeamDirectory``), so a push, the scoreboard and the hall of fame agree.
package struct Club: Sendable, Hashable, Codable {
    /// Retrosheet's code of the club in its era: `CHA`, `MON`, `WS2`. A game's id and its team
    /// codes are these (`CHA202008250`).
    package var retrosheet: String
    /// The franchise, as Retrosheet names it today: `CHA`; `WAS` for the Expos, `TEX` for the
    /// Senators of 1961-1971. Favourite teams are franchises.
    package var franchise: String
    /// MLB's abbreviation as it was, what a fan reads: `CWS`, `MON`, `WSA`, `OAK` until 2024,
    /// `ATH` from 2025 (Retrosheet's code for a club MLB does not list).
    package var abbreviation: String
    /// MLB's team id (the franchise's: the Expos' is the Nationals' 120); nil for a club MLB does
    /// not list (the Federal League's).
    package var mlbID: Int?
    /// What the club was named after: "Chicago", "California" (the 1966-1996 Angels), "Texas";
    /// empty for the 2025 Athletics.
    package var location: String
    /// "White Sox", "Indians", "Colt .45's".
    package var nickname: String
    /// `AL`, `NL` (or a league of old: `AA`, `FL`).
    package var league: String
    /// `East`, `Central`, `West`; nil before 1969 and for a club of no division.
    package var division: String?
    /// The ballpark's time zone (an IANA name).
    package var timeZone: String

    package init(
        retrosheet: String, franchise: String, abbreviation: String, mlbID: Int?, location: String, nickname: String,
        league: String, division: String?, timeZone: String
    ) {
        self.retrosheet = retrosheet
        self.franchise = franchise
        self.abbreviation = abbreviation
        self.mlbID = mlbID
        self.location = location
        self.nickname = nickname
        self.league = league
        self.division = division
        self.timeZone = timeZone
    }

    /// "Chicago White Sox", "Athletics".
    package var name: String { location.isEmpty ? nickname : "\(location) \(nickname)" }

    /// "AL Central"; nil without a division.
    package var divisionName: String? { division.map { "\(league) \($0)" } }

    /// A club known only by a code (a game whose source names no club the directory knows): the
    /// code stands for every name.
    package static func unlisted(_ code: String, location: String = "", nickname: String? = nil, league: String = "")
        -> Club
    {
        Club(
            retrosheet: code, franchise: code, abbreviation: code, mlbID: nil, location: location,
            nickname: nickname ?? code, league: league, division: nil, timeZone: "America/New_York")
    }
}

extension Club {
    /// A club as the API and the command line show it to a fan: names and MLB's abbreviation, no
    /// Retrosheet code.
    package struct View: Sendable, Hashable, Codable {
        /// `CWS`.
        package var abbreviation: String
        /// "Chicago White Sox".
        package var name: String
        /// "Chicago".
        package var location: String
        /// "White Sox".
        package var nickname: String
        /// `AL`, `NL`.
        package var league: String
        /// "AL Central"; nil before divisions.
        package var division: String?
        /// MLB's team id; nil for a club MLB does not list (`mlb_id` in snake case).
        package var mlbId: Int?
    }

    /// The club as a fan sees it.
    package var view: View {
        View(
            abbreviation: abbreviation, name: name, location: location, nickname: nickname, league: league,
            division: divisionName, mlbId: mlbID)
    }
}
