/// The words for numbers and innings that every surface uses — alerts, the live board and stream,
/// the scoreboard, the hall of fame, the deals, the command line — in one place, so that a push and
/// a page never say one thing two ways. Plays are put into words by ``PlayDescription``.
package enum Words {
    /// "1st", "2nd", "3rd", "11th", "23rd".
    package static func ordinal(_ number: Int) -> String {
        let suffix: String
        switch (number % 10, number % 100) {
        case (_, 11...13): suffix = "th"
        case (1, _): suffix = "st"
        case (2, _): suffix = "nd"
        case (3, _): suffix = "rd"
        default: suffix = "th"
        }
        return "\(number)\(suffix)"
    }

    /// "top" or "bottom": the half of an inning `battingSide` bats in.
    package static func half(_ battingSide: Side) -> String { battingSide == .away ? "top" : "bottom" }

    /// "top of the 7th".
    package static func inning(_ inning: Int, _ battingSide: Side) -> String {
        "\(half(battingSide)) of the \(ordinal(inning))"
    }

    /// "nobody out", "1 out", "2 outs".
    package static func outs(_ count: Int) -> String {
        count == 0 ? "nobody out" : count == 1 ? "1 out" : "\(count) outs"
    }

    /// Where a play left the game: "1 out in the top of the 7th", "nobody out in the bottom of
    /// the 9th", "end of the top of the 7th" (three outs).
    package static func situation(outs: Int, inning: Int, battingSide: Side) -> String {
        outs >= 3
            ? "end of the \(Words.inning(inning, battingSide))"
            : "\(Words.outs(outs)) in the \(Words.inning(inning, battingSide))"
    }

    /// "7 innings", "1 inning", "2/3 inning", "6 2/3 innings", "0 innings": outs as innings
    /// pitched, in words, as fans write them.
    package static func innings(outs: Int) -> String {
        let (whole, thirds) = (outs / 3, outs % 3)
        let text = thirds == 0 ? "\(whole)" : whole == 0 ? "\(thirds)/3" : "\(whole) \(thirds)/3"
        return text + (outs <= 3 && outs > 0 ? " inning" : " innings")
    }

    /// "6.2": innings pitched as box scores write them.
    package static func inningsPitched(outs: Int) -> String { "\(outs / 3).\(outs % 3)" }

    /// What a scoreboard shows for a game under way: "Top 5th", "Bot 5th" during a half, "Mid 5th"
    /// after the top's third out, "End 5th" after the bottom's.
    package static func boardInning(_ inning: Int, _ battingSide: Side, outs: Int) -> String {
        if outs >= 3 { return "\(battingSide == .away ? "Mid" : "End") \(ordinal(inning))" }
        return "\(battingSide == .away ? "Top" : "Bot") \(ordinal(inning))"
    }

    /// "single", "double", "triple", "home run"; nil for a play that is not a hit.
    package static func hit(_ type: EventType) -> String? {
        type.isHit ? ["single", "double", "triple", "home run"][type.hitValue - 1] : nil
    }
}
