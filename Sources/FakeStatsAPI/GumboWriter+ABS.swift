import Baseball
import Foundation
import Retrosheet
import StatsAPI

extension GumboWriter {
    /// The challenges of `plan` thrown by `now`, each on its pitch (its call, the count after it,
    /// its review), and the counters they leave.
    static func challenges(
        _ plan: SyntheticABS.Plan, of game: ReplayGame, at now: Date, in plays: inout [PlayRecord],
        recordOf: [Int: Int], people: People
    ) -> GameData.ABSChallengesBlock {
        let teams = PerSide(away: team(game.info.away).id, home: team(game.info.home).id)
        for challenge in plan.challenges where challenge.time <= now {
            guard let index = recordOf[challenge.update], plays.indices.contains(index) else { continue }
            let pitches = plays[index].playEvents.indices.filter { plays[index].playEvents[$0].value?.isPitch == true }
            guard challenge.pitchNumber <= pitches.count,
                case .value(var event) = plays[index].playEvents[pitches[challenge.pitchNumber - 1]]
            else { continue }
            let ball = challenge.callAfter == .ball
            let code = ball ? "B" : "C"
            let words = ball ? "Ball" : "Called Strike"
            event.details.code = code
            event.details.call = NamedCode(code: code, description: words)
            event.details.description = words
            event.details.isBall = ball
            event.details.isStrike = !ball
            event.details.isInPlay = false
            event.details.hasReview = true
            event.count = .init(balls: challenge.balls, strikes: challenge.strikes, outs: challenge.outs)
            event.reviewDetails = ReviewDetails(
                isOverturned: challenge.overturned, inProgress: false, reviewType: "MJ",
                challengeTeamId: teams[challenge.side],
                player: Person(
                    id: people.id(challenge.challenger), fullName: game.info.players["\(challenge.challenger)"]))
            plays[index].playEvents[pitches[challenge.pitchNumber - 1]] = .value(event)
            plays[index].about.hasReview = true
        }
        let counters = plan.counters(at: now)
        func block(_ side: Side) -> GameData.ABSChallengesBlock.TeamChallenges {
            .init(
                usedSuccessful: counters[side].won, usedFailed: counters[side].lost,
                remaining: counters[side].remaining)
        }
        return .init(hasChallenges: true, away: block(.away), home: block(.home))
    }
}
