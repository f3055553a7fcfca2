/// A game's automated ball-strike (ABS) challenges as its source says them: each team's counters
/// (challenges left, won and lost) and every challenged pitch. Each team starts a game with two,
/// keeps one that succeeds, loses one that fails, and is given one more in each extra inning it
/// starts with none left.
package struct ABSChallenges: Sendable, Hashable, Codable {
    /// One team's counters, as the source's feed gives them.
    package struct Counters: Sendable, Hashable, Codable {
        package var remaining: Int
        /// Challenges that overturned the call.
        package var won: Int
        /// Challenges that upheld it.
        package var lost: Int

        package init(remaining: Int, won: Int, lost: Int) {
            self.remaining = remaining
            self.won = won
            self.lost = lost
        }
    }

    /// Who asked for the review: only the batter, the pitcher and the catcher may.
    package enum Role: String, Sendable, Hashable, Codable {
        case batter
        case pitcher
        case catcher
    }

    /// A challenged pitch.
    package struct Challenge: Sendable, Hashable, Codable {
        package var inning: Int
        package var battingSide: Side
        /// The plate appearance's number in the game (the feed's `atBatIndex`).
        package var plateAppearance: Int
        /// The pitch's number in its plate appearance, from 1.
        package var pitchNumber: Int
        package var batter: PlayerID
        package var pitcher: PlayerID
        /// The player who challenged, the side he plays for, and his role.
        package var challenger: PlayerID
        package var side: Side
        package var role: Role
        /// The umpire's call and the call after the review: `ball` or `strike`.
        package var callBefore: Call
        package var callAfter: Call
        /// The count after the pitch, as it stands after the review.
        package var balls: Int
        package var strikes: Int

        package var overturned: Bool { callBefore != callAfter }

        package init(
            inning: Int, battingSide: Side, plateAppearance: Int, pitchNumber: Int, batter: PlayerID,
            pitcher: PlayerID, challenger: PlayerID, side: Side, role: Role, callBefore: Call, callAfter: Call,
            balls: Int, strikes: Int
        ) {
            self.inning = inning
            self.battingSide = battingSide
            self.plateAppearance = plateAppearance
            self.pitchNumber = pitchNumber
            self.batter = batter
            self.pitcher = pitcher
            self.challenger = challenger
            self.side = side
            self.role = role
            self.callBefore = callBefore
            self.callAfter = callAfter
            self.balls = balls
            self.strikes = strikes
        }
    }

    package enum Call: String, Sendable, Hashable, Codable {
        case ball
        case strike

        package var opposite: Call { self == .ball ? .strike : .ball }
    }

    /// The feed's counters: what the board shows.
    package var counters: PerSide<Counters>
    /// Every challenged pitch in the order thrown.
    package var challenges: [Challenge]

    package init(counters: PerSide<Counters>, challenges: [Challenge]) {
        self.counters = counters
        self.challenges = challenges
    }

    /// The won and lost challenges the pitch records count for `side`.
    package func recorded(_ side: Side) -> (won: Int, lost: Int) {
        let own = challenges.filter { $0.side == side }
        let won = own.filter(\.overturned).count
        return (won, own.count - won)
    }

    /// Where the feed's counters and its pitch records disagree, in words ("CWS's counters say 1
    /// won and 0 lost; its challenged pitches, 2 won and 0 lost"); empty when they agree.
    package func disagreements(names: PerSide<String>) -> [String] {
        Side.allCases.compactMap { side in
            let recorded = recorded(side)
            let counters = counters[side]
            guard recorded.won != counters.won || recorded.lost != counters.lost else { return nil }
            return
                "\(names[side])'s ABS counters say \(counters.won) won and \(counters.lost) lost; its challenged pitches, "
                + "\(recorded.won) won and \(recorded.lost) lost"
        }
    }
}
