import Baseball
import Foundation

/// What a no-hitter just completed means, from the seasons known: the club's previous one and its
/// number in the season ("The White Sox's first no-hitter since Philip Humber's perfect game on
/// April 21, 2012; the 1st of 2020."). Only what came before the game counts: a replayed day is
/// never told of a no-hitter later in its season. Pure.
package enum NoHitterHistory {
    /// `seasons`: each season read, with its official no-hitters (`SeasonBids.official`), from the
    /// game's season back to as far as was needed (the club's previous one, or every season known).
    package static func meaning(
        franchise: String, nickname: String, date: String, gameID: String, seasons: [Int: [SideSummary]]
    ) -> String? {
        guard let year = Int(date.prefix(4)) else { return nil }
        let before = seasons.filter { $0.key <= year }.values.joined().filter { ($0.date, $0.gameID) < (date, gameID) }
        var parts: [String] = []
        let club = possessive(nickname)
        if let previous = before.filter({ $0.pitchingClub.franchise == franchise }).max(by: {
            ($0.date, $0.gameID) < ($1.date, $1.gameID)
        }) {
            let then = "\(who(previous)) on \(spoken(previous.date))"
            // "Since" only when every season in between is known.
            let from = Int(previous.date.prefix(4)) ?? year
            let gapless = (from...year).allSatisfy { seasons[$0] != nil }
            parts.append(
                gapless
                    ? "the \(club) first no-hitter since \(then)"
                    : "the \(club) previous no-hitter in the seasons known was \(then)")
        } else if let first = seasons.keys.filter({ $0 <= year }).min() {
            let since = first == year ? "in \(year)" : "since \(first)"
            parts.append("the \(club) first no-hitter in the seasons known (\(since))")
        }
        if seasons[year] != nil {
            let number = before.filter { $0.date.hasPrefix(String(year)) }.count + 1
            parts.append("the \(Words.ordinal(number)) of \(year)")
        }
        guard !parts.isEmpty else { return nil }
        let text = parts.joined(separator: "; ")
        return text.prefix(1).uppercased() + text.dropFirst() + "."
    }

    /// "the White Sox's", "the Cubs'".
    static func possessive(_ nickname: String) -> String {
        nickname.hasSuffix("s") ? "\(nickname)'" : "\(nickname)'s"
    }

    /// "Philip Humber's perfect game", "Nolan Ryan's no-hitter", "the combined no-hitter of Kent
    /// Mercker, Mark Wohlers and Alejandro Peña".
    static func who(_ side: SideSummary) -> String {
        let names = side.pitcherNames.isEmpty ? side.bidPitchers : side.pitcherNames
        if names.count > 1 {
            let list =
                names.count == 2
                ? names.joined(separator: " and ")
                : names.dropLast().joined(separator: ", ") + " and " + (names.last ?? "")
            return "the combined \(side.perfect ? "perfect game" : "no-hitter") of \(list)"
        }
        return "\(names.first ?? side.pitchingClub.nickname)'s \(side.perfect ? "perfect game" : "no-hitter")"
    }

    /// "2012-04-21" as "April 21, 2012".
    static func spoken(_ date: String) -> String {
        let parts = date.split(separator: "-").compactMap { Int($0) }
        let months = [
            "January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
            "November", "December",
        ]
        guard parts.count == 3, (1...12).contains(parts[1]) else { return date }
        return "\(months[parts[1] - 1]) \(parts[2]), \(parts[0])"
    }
}
