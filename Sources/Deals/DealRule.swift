import Baseball
import Foundation

/// One version of a sports-triggered promotion: whose games, what about the final game triggers
/// it, the reward, and when it can be redeemed. Rules are data (`Data/deals/*.json`, or an
/// operator's `--deals FILE`); a threshold that changed between seasons is two versions of one
/// rule with their effective dates.
package struct DealRule: Sendable, Hashable {
    /// Names the sponsor and the team: `papa-johns-dc-nationals`.
    package var id: String
    package var version: Int
    /// "Papa John's (DC area)".
    package var sponsor: String
    /// The team whose games count; nil for a promotion about either team (a World Series steal).
    package var team: Team?
    package var games: Games
    package var when: DealCondition
    package var reward: Reward
    package var redeem: Redemption
    /// The rule's local time zone: deal days, redemption windows and "today" are its days.
    package var timeZone: String
    /// First and last official game dates (`yyyy-mm-dd`) the version applies to; `to` nil: no end
    /// known.
    package var effectiveFrom: String
    package var effectiveTo: String?
    /// Who can redeem it ("ticket holders", "online orders").
    package var eligibility: String?
    /// Where the rule was found (URLs or publications with dates).
    package var sources: [String]
    /// What the sources do not confirm, said rather than invented.
    package var note: String?

    package struct Team: Sendable, Hashable {
        /// MLB's team id (120 for the Nationals).
        package var mlb: Int
        /// Retrosheet's code (`WAS`).
        package var retro: String
        /// "Nationals".
        package var name: String
    }

    package struct Games: Sendable, Hashable {
        /// MLB game types that count: `R` regular season, `F` `D` `L` `W` postseason rounds.
        package var types: Set<String>
        package var venue: Venue
    }

    package enum Venue: String, Sendable, Hashable {
        case home, away, any
    }

    package struct Reward: Sendable, Hashable {
        package var text: String
        package var code: String?
    }

    /// When the reward can be had.
    package enum Redemption: Sendable, Hashable {
        /// The local day after the deal date.
        case nextLocalDay
        /// The deal date itself, until midnight.
        case untilMidnight
        /// `days` local days starting the day after the deal date.
        case days(Int)
        /// Fixed dates, chosen by the game's number in its series (a World Series steal in games
        /// 1-2 is redeemed on one date, in game 3 or later on another).
        case fixed([FixedDate])
    }

    package struct FixedDate: Sendable, Hashable {
        /// Series game numbers it applies to; empty: every game.
        package var seriesGames: ClosedRange<Int>?
        package var date: String
        /// Local times `HH:MM`, when the window is part of the day.
        package var from: String?
        package var to: String?
    }

    /// Whether the version applies to a game on `date` (`yyyy-mm-dd`).
    package func isEffective(on date: String) -> Bool {
        date >= effectiveFrom && (effectiveTo.map { date <= $0 } ?? true)
    }

    /// The version's "id@version", named in trigger ids.
    package var versionedID: String { "\(id)@\(version)" }
}

/// A condition over a final game, from the rule's team's side ("for" is the team's; with no team,
/// counts are either team's).
package indirect enum DealCondition: Sendable, Hashable {
    case all([DealCondition])
    case any([DealCondition])
    case not(DealCondition)
    case result(Outcome)
    case runsFor(Comparison)
    case runsAgainst(Comparison)
    /// Runs for less runs against (negative in a loss).
    case margin(Comparison)
    case venue(DealRule.Venue)
    /// Innings played.
    case innings(Comparison)
    /// Events by the team's batters (`stolen_base`, `home_run`, `strikeout`), or by its pitchers
    /// (a strikeout of an opposing batter).
    case count(DealEvent, by: Actor, Comparison)
    /// The team won with a save.
    case save
    /// The first game of its series (postseason) in which `event` happened (by either team when the
    /// rule has none).
    case firstInSeries(DealEvent)

    package enum Outcome: String, Sendable, Hashable {
        case win, loss, tie
    }

    package enum Actor: String, Sendable, Hashable {
        case batters, pitchers
    }

    package struct Comparison: Sendable, Hashable {
        package enum Operator: String, Sendable, Hashable, CaseIterable {
            case atLeast = ">="
            case greater = ">"
            case atMost = "<="
            case less = "<"
            case equal = "=="
        }

        package var op: Operator
        package var value: Int

        package func holds(_ number: Int) -> Bool {
            switch op {
            case .atLeast: number >= value
            case .greater: number > value
            case .atMost: number <= value
            case .less: number < value
            case .equal: number == value
            }
        }

        /// The smallest count that satisfies it, for naming the play that did it (`>= 7` → 7).
        package var threshold: Int? {
            switch op {
            case .atLeast: value
            case .greater: value + 1
            case .equal: value
            case .atMost, .less: nil
            }
        }
    }
}

package typealias DealEvent = GameTally.Event
