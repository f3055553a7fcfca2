import Baseball

extension DealBook {
    /// Why `rule` is not on `day`, in words, from the final games that could have made it (those
    /// whose deal date opens a window on `day`): "the Nationals lost 3-5 yesterday", "no Nationals
    /// game yesterday", "the Dodgers won 4-2 yesterday; the deal needs more". Pure.
    package static func whyNot(_ rule: DealRule, day: String, games: [DealGame]) -> String {
        guard rule.isEffective(on: day) else { return "the deal is not in force today" }
        let days: [String]
        let span: String
        switch rule.redeem {
        case .nextLocalDay:
            days = [DealCalendar.adding(-1, to: day)]
            span = "yesterday"
        case .untilMidnight:
            days = [day]
            span = "today so far"
        case .days(let count):
            days = (1...max(1, count)).map { DealCalendar.adding(-$0, to: day) }
            span = count == 1 ? "yesterday" : "in the \(count) days before today"
        case .fixed(let dates):
            guard dates.contains(where: { $0.date == day }) else {
                let listed = dates.map { DealCalendar.spoken($0.date) }.joined(separator: ", ")
                return "today is not one of the deal's dates (\(listed))"
            }
            return "no game has met it for today's date"
        }
        let counted = games.filter { game in
            days.contains(game.dealDate) && rule.games.types.contains(game.gameType)
                && (rule.team.map { game.side(of: $0.retro) != nil } ?? true)
        }
        .sorted { $0.dealDate == $1.dealDate ? $0.gameNumber < $1.gameNumber : $0.dealDate < $1.dealDate }
        guard let team = rule.team else {
            return counted.isEmpty ? "no game \(span)" : "none of the \(counted.count) games \(span) met it"
        }
        // "the Nationals": the club's nickname as its games name it (the rule names it in full).
        let nickname =
            counted.first.map { $0.names[$0.side(of: team.retro)!] } ?? TeamDirectory.club(team.retro, on: day)?
            .nickname
            ?? team.name
        guard !counted.isEmpty else { return "no \(nickname) game \(span)" }
        let results = counted.map { game -> String in
            let side = game.side(of: team.retro)!
            let (us, them) = (game.runs[side], game.runs[side.opponent])
            let result = us > them ? "won" : us < them ? "lost" : "tied"
            let when = days.count == 1 ? span : "on \(DealCalendar.spoken(game.dealDate))"
            let venue =
                rule.games.venue == .home && side != .home
                ? " on the road"
                : rule.games.venue == .away && side != .away ? " at home" : ""
            return "the \(nickname) \(result) \(us)-\(them)\(venue) \(when)"
        }
        let lost = counted.allSatisfy { $0.runs[$0.side(of: team.retro)!] < $0.runs[$0.side(of: team.retro)!.opponent] }
        return results.joined(separator: "; ") + (lost ? "" : "; not enough for the deal")
    }
}
