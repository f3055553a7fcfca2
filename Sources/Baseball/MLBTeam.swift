/// The thirty clubs: the Stats API's team id, its abbreviation, and Retrosheet's team code, so a
/// game read from either source gets the same id (`CHA202008250`) and the same moments. A game's
/// team code is Retrosheet's; people may name a club by either code.
package struct MLBTeam: Sendable, Hashable {
    package var id: Int
    package var abbreviation: String
    package var retrosheet: String

    /// The club's name as MLB writes it today ("Chicago White Sox"); a game's own names come from
    /// its source (the Retrosheet team file, the Stats API), which knows the name of its season.
    package var name: String { Self.names[abbreviation] ?? abbreviation }

    private static let names: [String: String] = [
        "ATH": "Athletics",
        "ATL": "Atlanta Braves",
        "AZ": "Arizona Diamondbacks",
        "BAL": "Baltimore Orioles",
        "BOS": "Boston Red Sox",
        "CHC": "Chicago Cubs",
        "CIN": "Cincinnati Reds",
        "CLE": "Cleveland Guardians",
        "COL": "Colorado Rockies",
        "CWS": "Chicago White Sox",
        "DET": "Detroit Tigers",
        "HOU": "Houston Astros",
        "KC": "Kansas City Royals",
        "LAA": "Los Angeles Angels",
        "LAD": "Los Angeles Dodgers",
        "MIA": "Miami Marlins",
        "MIL": "Milwaukee Brewers",
        "MIN": "Minnesota Twins",
        "NYM": "New York Mets",
        "NYY": "New York Yankees",
        "PHI": "Philadelphia Phillies",
        "PIT": "Pittsburgh Pirates",
        "SD": "San Diego Padres",
        "SEA": "Seattle Mariners",
        "SF": "San Francisco Giants",
        "STL": "St. Louis Cardinals",
        "TB": "Tampa Bay Rays",
        "TEX": "Texas Rangers",
        "TOR": "Toronto Blue Jays",
        "WSH": "Washington Nationals",
    ]

    package static let all: [MLBTeam] = [
        .init(id: 108, abbreviation: "LAA", retrosheet: "ANA"), .init(id: 109, abbreviation: "AZ", retrosheet: "ARI"),
        .init(id: 110, abbreviation: "BAL", retrosheet: "BAL"), .init(id: 111, abbreviation: "BOS", retrosheet: "BOS"),
        .init(id: 112, abbreviation: "CHC", retrosheet: "CHN"), .init(id: 113, abbreviation: "CIN", retrosheet: "CIN"),
        .init(id: 114, abbreviation: "CLE", retrosheet: "CLE"), .init(id: 115, abbreviation: "COL", retrosheet: "COL"),
        .init(id: 116, abbreviation: "DET", retrosheet: "DET"), .init(id: 117, abbreviation: "HOU", retrosheet: "HOU"),
        .init(id: 118, abbreviation: "KC", retrosheet: "KCA"), .init(id: 119, abbreviation: "LAD", retrosheet: "LAN"),
        .init(id: 120, abbreviation: "WSH", retrosheet: "WAS"), .init(id: 121, abbreviation: "NYM", retrosheet: "NYN"),
        .init(id: 133, abbreviation: "ATH", retrosheet: "OAK"), .init(id: 134, abbreviation: "PIT", retrosheet: "PIT"),
        .init(id: 135, abbreviation: "SD", retrosheet: "SDN"), .init(id: 136, abbreviation: "SEA", retrosheet: "SEA"),
        .init(id: 137, abbreviation: "SF", retrosheet: "SFN"), .init(id: 138, abbreviation: "STL", retrosheet: "SLN"),
        .init(id: 139, abbreviation: "TB", retrosheet: "TBA"), .init(id: 140, abbreviation: "TEX", retrosheet: "TEX"),
        .init(id: 141, abbreviation: "TOR", retrosheet: "TOR"), .init(id: 142, abbreviation: "MIN", retrosheet: "MIN"),
        .init(id: 143, abbreviation: "PHI", retrosheet: "PHI"), .init(id: 144, abbreviation: "ATL", retrosheet: "ATL"),
        .init(id: 145, abbreviation: "CWS", retrosheet: "CHA"), .init(id: 146, abbreviation: "MIA", retrosheet: "MIA"),
        .init(id: 147, abbreviation: "NYY", retrosheet: "NYA"), .init(id: 158, abbreviation: "MIL", retrosheet: "MIL"),
    ]

    private static let byID = Dictionary(uniqueKeysWithValues: all.map { ($0.id, $0) })
    private static let byRetrosheet = Dictionary(uniqueKeysWithValues: all.map { ($0.retrosheet, $0) })

    package static func id(_ id: Int) -> MLBTeam? { byID[id] }

    package static func retrosheet(_ code: String) -> MLBTeam? { byRetrosheet[code] }

    private static let byEitherCode = Dictionary(
        all.flatMap { [($0.abbreviation, $0), ($0.retrosheet, $0)] }, uniquingKeysWith: { first, _ in first })

    /// The club by MLB's abbreviation (`NYY`) or Retrosheet's code (`NYA`), upper case.
    package static func code(_ code: String) -> MLBTeam? { byEitherCode[code] }

    /// Every code `code(_:)` takes, sorted.
    package static let codes = byEitherCode.keys.sorted()
}
