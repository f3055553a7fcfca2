import Baseball
import Foundation
import Retrosheet
import StatsAPI

/// ABS challenges added to a replayed day (`fake-statsapi --abs SEED`), so that the whole path —
/// feed, follower, board, game page, widget — runs end to end on days played before ABS existed.
/// They are synthetic, and said to be: drawn from the seed, the same for every run with it.
///
/// The record stays the truth: a challenge is put only on a called pitch (a ball or a called
/// strike) before the pitch the play is made on, and the call the record gives is the call after
/// the review. An overturned challenge of a pitch the record calls a strike was a ball the
/// fielding side (the catcher, sometimes the pitcher) challenged; an upheld one, a strike the
/// batter challenged; and the other way round for a ball. The rules are ABS's: two a team, kept
/// when successful, one more in an extra inning begun with none left. Pure.
package struct SyntheticABS: Sendable {
    /// A challenge planned on a pitch of the game.
    package struct Planned: Sendable, Hashable {
        /// When the pitch was thrown (the replay's time) and the update it comes before.
        package var time: Date
        package var update: Int
        /// Its number in the plate appearance, from 1.
        package var pitchNumber: Int
        package var callAfter: ABSChallenges.Call
        package var overturned: Bool
        package var side: Side
        package var role: ABSChallenges.Role
        package var challenger: PlayerID
        /// The count after the pitch.
        package var balls: Int
        package var strikes: Int
        /// Outs in the half when it was thrown.
        package var outs: Int

        package init(
            time: Date, update: Int, pitchNumber: Int, callAfter: ABSChallenges.Call, overturned: Bool, side: Side,
            role: ABSChallenges.Role, challenger: PlayerID, balls: Int, strikes: Int, outs: Int
        ) {
            self.time = time
            self.update = update
            self.pitchNumber = pitchNumber
            self.callAfter = callAfter
            self.overturned = overturned
            self.side = side
            self.role = role
            self.challenger = challenger
            self.balls = balls
            self.strikes = strikes
            self.outs = outs
        }
    }

    package let seed: UInt64
    /// The chance that a called pitch is challenged (when the side that would challenge has one
    /// left): about four a game, as in ABS's first seasons.
    package var rate = 0.03
    /// The share of challenges that overturn the call (about half).
    package var overturnRate = 0.5

    package init(seed: UInt64) {
        self.seed = seed
    }

    /// A game's challenges, and the challenges given back in extra innings, in order.
    package struct Plan: Sendable, Hashable {
        package var challenges: [Planned] = []
        /// When a team that had none left was given one for an extra inning.
        package var grants: [Grant] = []

        package struct Grant: Sendable, Hashable {
            package var time: Date
            package var update: Int
            package var side: Side

            package init(time: Date, update: Int, side: Side) {
                self.time = time
                self.update = update
                self.side = side
            }
        }

        package init(challenges: [Planned] = [], grants: [Grant] = []) {
            self.challenges = challenges
            self.grants = grants
        }

        /// Each team's counters as of `now`: a grant comes only to a team with none left, so
        /// what is left is the two it started with, less those lost, plus those given back.
        package func counters(at now: Date) -> PerSide<ABSChallenges.Counters> {
            var counters = PerSide(repeating: ABSChallenges.Counters(remaining: 2, won: 0, lost: 0))
            for grant in grants where grant.time <= now { counters[grant.side].remaining += 1 }
            for challenge in challenges where challenge.time <= now {
                if challenge.overturned {
                    counters[challenge.side].won += 1
                } else {
                    counters[challenge.side].lost += 1
                    counters[challenge.side].remaining -= 1
                }
            }
            return counters
        }
    }

    /// Every challenge of `game`, in the order thrown.
    package func plan(_ game: ReplayGame) -> Plan {
        let pk = UInt64(GumboWriter.gamePk(game))
        var state = GameState(starters: game.record.startingAppearances, homeBatsFirst: game.record.homeBatsFirst)
        var remaining = PerSide(repeating: 2)
        var extraGiven = PerSide(repeating: 0)
        let scheduled = game.record.scheduledInnings
        var plan = Plan()
        let pitches = Dictionary(grouping: game.timedPitches().filter { !$0.afterPlay }, by: \.update)
        for (order, entry) in game.updates.enumerated() {
            if case .play(let record) = entry.update {
                let battingSide = record.battingSide
                for side in Side.allCases where record.inning > scheduled && extraGiven[side] < record.inning {
                    // One more in each extra inning a team starts with none left.
                    extraGiven[side] = record.inning
                    if remaining[side] == 0 {
                        remaining[side] = 1
                        plan.grants.append(
                            .init(time: pitches[order]?.first?.time ?? entry.time, update: order, side: side))
                    }
                }
                for pitch in pitches[order] ?? [] {
                    let call: ABSChallenges.Call
                    switch pitch.code {
                    case UInt8(ascii: "B"): call = .ball
                    case UInt8(ascii: "C"): call = .strike
                    default: continue
                    }
                    let place = (pk, UInt64(order), UInt64(pitch.atBat.pitches))
                    guard Self.uniform(seed, place.0, place.1, place.2) < rate else { continue }
                    let overturned = Self.uniform(seed ^ 0x5bd1_e995, place.0, place.1, place.2) < overturnRate
                    // Who asked: the side the umpire's call went against.
                    let before = overturned ? call.opposite : call
                    let side = before == .strike ? battingSide : battingSide.opponent
                    guard remaining[side] > 0 else { continue }
                    let role: ABSChallenges.Role
                    let challenger: PlayerID
                    if side == battingSide {
                        (role, challenger) = (.batter, record.batter)
                    } else if Self.uniform(seed ^ 0x27d4_eb2f, place.0, place.1, place.2) < 0.75 {
                        (role, challenger) = (.catcher, state.fielder(2, of: side))
                    } else {
                        (role, challenger) = (.pitcher, state.fielder(1, of: side))
                    }
                    if !overturned { remaining[side] -= 1 }
                    plan.challenges.append(
                        Planned(
                            time: pitch.time, update: order, pitchNumber: pitch.atBat.pitches, callAfter: call,
                            overturned: overturned, side: side, role: role, challenger: challenger,
                            balls: pitch.atBat.balls, strikes: pitch.atBat.strikes,
                            outs: state.outs >= 3 ? 0 : state.outs))
                }
            }
            _ = try? state.apply(entry.update)
        }
        return plan
    }

    /// A number in [0, 1) drawn from the seed and a pitch's place (SplitMix64).
    static func uniform(_ values: UInt64...) -> Double {
        var x: UInt64 = 0x9e37_79b9_7f4a_7c15
        for value in values {
            x = (x ^ value) &+ 0x9e37_79b9_7f4a_7c15
            x = (x ^ (x >> 30)) &* 0xbf58_476d_1ce4_e5b9
            x = (x ^ (x >> 27)) &* 0x94d0_49bb_1331_11eb
            x ^= x >> 31
        }
        return Double(x >> 11) / Double(1 << 53)
    }
}
