import Baseball

/// Where a bid stands in its game when it is compared: what the detector needs besides the bid.
package struct MomentContext: Sendable, Hashable {
    package var gameID: String
    package var inning: Int
    package var battingSide: Side
    package var outsInInning: Int
    package var score: PerSide<Int>
    /// Whether every out of a notable bid is a moment (`hitless-out` for those that are neither a
    /// complete inning nor the 25th or 26th): where the odds of history are known.
    package var everyOut: Bool
    /// Why no bid of the game can count whatever happens (a seven-inning doubleheader game): its
    /// moments say so while it goes on.
    package var cannotCount: UnofficialReason?

    package init(
        gameID: String, inning: Int, battingSide: Side, outsInInning: Int, score: PerSide<Int>, everyOut: Bool = false
    ) {
        self.gameID = gameID
        self.inning = inning
        self.battingSide = battingSide
        self.outsInInning = outsInInning
        self.score = score
        self.everyOut = everyOut
    }

    /// The context right after a play, from the game state after it.
    package init(gameID: String, after state: GameState, everyOut: Bool = false) {
        self.init(
            gameID: gameID, inning: state.inning, battingSide: state.battingSide, outsInInning: state.outs,
            score: state.score, everyOut: everyOut)
    }
}

/// Compares two snapshots of a bid and names what happened in between. Pure: the same two
/// snapshots always give the same moments, with the same ids.
package enum MomentDetector {
    package static func moments(from before: NoHitBid, to after: NoHitBid, in context: MomentContext) -> [Moment] {
        var moments: [Moment] = []
        func add(_ kind: Moment.Kind, outs: Int, batter: PlayerID? = nil, eventType: EventType? = nil) {
            moments.append(
                Moment(
                    id: Moment.id(
                        gameID: context.gameID, side: after.pitchingSide, kind: kind, outs: outs,
                        pitcher: after.currentPitcher),
                    gameID: context.gameID, pitchingSide: after.pitchingSide, kind: kind, outs: outs,
                    inning: context.inning, battingSide: context.battingSide, outsInInning: context.outsInInning,
                    score: context.score, perfect: after.isPerfect && after.isHitless, pitchers: after.pitchers,
                    batter: batter, eventType: eventType, reason: after.unofficialReason ?? context.cannotCount))
        }

        // A scoring change can revive a bid that a hit had broken.
        if !before.isHitless && after.isHitless && after.outs >= Moment.notableOuts {
            add(.revived, outs: after.outs)
        }
        if after.isHitless {
            if before.isPerfect, let lost = after.perfectGameLostOn, lost.outsBefore >= Moment.notableOuts {
                add(.perfectGameLost, outs: lost.outsBefore, batter: lost.batter, eventType: lost.eventType)
            }
            if before.isAlive && after.isAlive && after.currentPitcher != before.currentPitcher
                && after.outs >= Moment.notableOuts
            {
                add(.pitchingChange, outs: after.outs)
            }
            // Every complete inning, and the 25th and 26th outs, passed since the last snapshot
            // (a double play can pass two at once; a revived bid picks up where it was broken).
            if after.outs > before.outs {
                for outs in (before.outs + 1)...after.outs where outs >= Moment.notableOuts {
                    if outs % 3 == 0 {
                        add(.hitlessInnings, outs: outs)
                    } else if outs == 25 || outs == 26 {
                        add(.ninthInningOut, outs: outs)
                    } else if context.everyOut {
                        add(.hitlessOut, outs: outs)
                    }
                }
            }
        } else if before.isHitless, let hit = after.firstHit, max(before.outs, hit.outsBefore) >= Moment.notableOuts {
            // A notable bid is broken up by a hit now, or by an earlier play re-scored as a hit
            // (then the hit's outs are fewer than the bid had reached).
            add(.brokenUp, outs: hit.outsBefore, batter: hit.batter, eventType: hit.eventType)
        }

        if before.ending == nil, let ending = after.ending, after.outs >= Moment.notableOuts {
            switch ending {
            case .official: add(.completed, outs: after.outs)
            case .notOfficial: add(.endedNotOfficial, outs: after.outs)
            }
        }
        return moments
    }
}

extension NoHitBid {
    /// Why the bid does not count, once the game is over.
    package var unofficialReason: UnofficialReason? {
        if case .notOfficial(let reason) = ending { return reason }
        return nil
    }
}
