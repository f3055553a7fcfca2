/// Follows both teams' no-hit bids through a game, play by play.
///
/// Feed it every play result (`record(_:number:)`), every pitcher who enters
/// (`recordPitcher(_:side:)`), and, when the game is over, the final state
/// (`finish(_:scheduledInnings:)`). Pure: nothing here reads a clock or does I/O.
///
/// A bid's pitchers are those on the mound for at least one of its plays; a pitcher who is
/// announced but never pitches (a scratched starter, a reliever brought in after the last out)
/// is the current pitcher for a while but not part of the bid.
package struct BidTracker: Sendable, Hashable {
    package private(set) var bids: PerSide<NoHitBid>
    /// All outs each pitching side has recorded.
    private var outs = PerSide(repeating: 0)

    /// Bids for a game starting with `state`'s starting pitchers.
    package init(startingFrom state: GameState) {
        bids = PerSide(
            away: NoHitBid(pitchingSide: .away, startingPitcher: state.pitching(.away).pitchers.first ?? .none),
            home: NoHitBid(pitchingSide: .home, startingPitcher: state.pitching(.home).pitchers.first ?? .none))
    }

    package subscript(side: Side) -> NoHitBid { bids[side] }

    /// Takes one play into account. `number` is the play's 1-based number in the game.
    package mutating func record(_ result: PlayResult, number: Int) {
        let side = result.pitchingSide
        var bid = bids[side]
        let mark = BidPlay(
            playNumber: number, inning: result.inning, battingSide: result.battingSide,
            outsInInning: result.outsBefore, outsBefore: outs[side], batter: result.batter, pitcher: result.pitcher,
            eventType: result.eventType, fielder: result.play.fieldedBy)
        outs[side] += result.outs
        if bid.firstBaserunner == nil && result.play.advances.batter != .none {
            bid.firstBaserunner = mark
        }
        guard bid.isAlive else {
            bids[side] = bid
            return
        }
        if !bid.pitchers.contains(result.pitcher) && !result.pitcher.isNone {
            bid.pitchers.append(result.pitcher)
        }
        bid.currentPitcher = result.pitcher
        if result.play.batterReachedBase && !result.eventType.isHit {
            bid.battersReached += 1
            if bid.perfectGameLostOn == nil { bid.perfectGameLostOn = mark }
        }
        if result.eventType.isHit {
            bid.firstHit = mark
        } else {
            bid.outs += result.outs
        }
        bids[side] = bid
    }

    /// A pitcher entered for `side`: he is on the mound, and joins the bid with his first play.
    package mutating func recordPitcher(_ pitcher: PlayerID, side: Side) {
        guard bids[side].isAlive else { return }
        bids[side].currentPitcher = pitcher
    }

    /// The game is over: decides, for each bid, whether it is an official no-hitter.
    ///
    /// MLB's rule: a completed game in which a team, batting in at least nine complete innings,
    /// gets no hit. So a hitless bid counts once the defence has recorded 27 outs; it does not in
    /// a game shortened before that, in a seven-inning doubleheader game, or when the road team
    /// loses without the home team batting in the ninth. A bid hitless through nine that is
    /// broken in extra innings does not count either.
    package mutating func finish(_ final: GameState, scheduledInnings: Int) {
        for side in Side.allCases {
            var bid = bids[side]
            guard bid.ending == nil else { continue }
            if bid.isHitless {
                if bid.outs >= 27 {
                    bid.ending = .official
                } else if scheduledInnings < 9 {
                    bid.ending = .notOfficial(.sevenInningDoubleheader)
                } else if side == .away && final.score.home > final.score.away && bid.outs >= 24 {
                    bid.ending = .notOfficial(.roadTeamLostInEightInnings)
                } else {
                    bid.ending = .notOfficial(.shortenedGame)
                }
            } else if bid.outs >= 27 {
                bid.ending = .notOfficial(.brokenInExtraInnings)
            }
            bids[side] = bid
        }
    }
}

extension NoHitBid {
    /// The bid of `side` rebuilt from scratch from the plays of a game so far (each play's result
    /// and number) and the pitchers who entered (with the number of plays made before each came
    /// in). The definition `BidTracker` is checked against.
    package static func computed(
        for side: Side, startingPitcher: PlayerID, plays: [(result: PlayResult, number: Int)],
        entries: [(pitcher: PlayerID, afterPlays: Int)]
    ) -> NoHitBid {
        var bid = NoHitBid(pitchingSide: side, startingPitcher: startingPitcher)
        let against = plays.filter { $0.result.pitchingSide == side }
        let hitIndex = against.firstIndex { $0.result.eventType.isHit }
        let whileHitless = hitIndex.map { Array(against[..<$0]) } ?? against
        bid.outs = whileHitless.reduce(0) { $0 + $1.result.outs }
        bid.battersReached = whileHitless.filter { $0.result.play.batterReachedBase }.count

        func mark(_ index: Int) -> BidPlay {
            let (result, number) = against[index]
            let outs = against[..<index].reduce(0) { $0 + $1.result.outs }
            return BidPlay(
                playNumber: number, inning: result.inning, battingSide: result.battingSide,
                outsInInning: result.outsBefore, outsBefore: outs, batter: result.batter, pitcher: result.pitcher,
                eventType: result.eventType, fielder: result.play.fieldedBy)
        }
        bid.firstHit = hitIndex.map(mark)
        bid.perfectGameLostOn = whileHitless.firstIndex { $0.result.play.batterReachedBase }.map(mark)
        bid.firstBaserunner = against.firstIndex { $0.result.play.advances.batter != .none }.map(mark)

        // The pitchers of the bid's plays, to the hit; the one on the mound is whoever came last,
        // by play or by entry, while the bid was alive.
        let bidPlays = hitIndex.map { Array(against[...$0]) } ?? against
        for play in bidPlays where !play.result.pitcher.isNone && !bid.pitchers.contains(play.result.pitcher) {
            bid.pitchers.append(play.result.pitcher)
        }
        let lastPlayNumber = hitIndex.map { against[$0].number } ?? Int.max
        let latestPlay = bidPlays.last.map { (at: $0.number, pitcher: $0.result.pitcher) }
        let latestEntry = entries.last { $0.afterPlays < lastPlayNumber }.map {
            (at: $0.afterPlays, pitcher: $0.pitcher)
        }
        switch (latestPlay, latestEntry) {
        case (let play?, let entry?): bid.currentPitcher = entry.at >= play.at ? entry.pitcher : play.pitcher
        case (let play?, nil): bid.currentPitcher = play.pitcher
        case (nil, let entry?): bid.currentPitcher = entry.pitcher
        case (nil, nil): break
        }
        return bid
    }
}
