import Baseball

/// A game replayed with both no-hit bids followed to the end.
package struct GameBids: Sendable {
    package var game: GameRecord
    package var final: GameState
    package var tracker: BidTracker
    /// For each play number (1-based, index 0 unused), the index of its record in `game.events`.
    package var eventIndexOfPlay: [Int32]
    /// Every pitcher on the mound for a play of each side, in order.
    package var pitchersOfPlays: PerSide<[PlayerID]>
    /// The last inning with a play.
    package var lastInning: Int
    /// Each side's pitches thrown when it recorded its 1st, 2nd, ... out; nil where the game's
    /// pitch sequences do not say (seasons scored without pitches).
    package var pitchesAtOut = PerSide<[Int]?>(repeating: [])
    /// Every pitcher's line of the game (for season records: outs and earned runs).
    package var pitcherLines = PitcherLines()

    /// Replays `game`, following both bids; the game is taken as complete at its last record.
    package static func replay(_ game: GameRecord) throws(RetrosheetError) -> GameBids {
        var indices: [Int32] = [0]
        indices.reserveCapacity(game.events.count + 1)
        var pitchers = PerSide<[PlayerID]>(repeating: [])
        var lastInning = 0
        var lines = PitcherLines()
        var half: (inning: Int, side: Side)?
        var atOut = PerSide<[Int]?>(repeating: [])
        var engine = try GameReplay.run(game, followsBids: true) { replayed in
            let result = replayed.result
            if half?.inning != result.inning || half?.side != result.battingSide {
                lines.startHalfInning()
                half = (result.inning, result.battingSide)
            }
            lines.record(result, pitches: replayed.pitches)
            if result.outs > 0, atOut[result.pitchingSide] != nil {
                if let total = lines.pitches(of: result.pitchingSide) {
                    atOut[result.pitchingSide]?.append(contentsOf: repeatElement(total, count: result.outs))
                } else {
                    atOut[result.pitchingSide] = nil
                }
            }
            indices.append(Int32(replayed.eventIndex))
            let side = replayed.result.pitchingSide
            if pitchers[side].last != replayed.result.pitcher && !pitchers[side].contains(replayed.result.pitcher) {
                pitchers[side].append(replayed.result.pitcher)
            }
            lastInning = max(lastInning, replayed.result.inning)
        }
        engine.finish(scheduledInnings: game.scheduledInnings)
        // A game scored without pitch sequences reads as fewer pitches than outs: not known.
        for side in Side.allCases {
            if let counts = atOut[side], let last = counts.last, last < counts.count { atOut[side] = nil }
        }
        return GameBids(
            game: game, final: engine.state, tracker: engine.tracker, eventIndexOfPlay: indices,
            pitchersOfPlays: pitchers, lastInning: lastInning, pitchesAtOut: atOut, pitcherLines: lines)
    }

    /// The event text of play `number`.
    package func eventText(ofPlay number: Int) -> String {
        game.text(game.events[Int(eventIndexOfPlay[number])].text)
    }

    /// The date as `yyyy-mm-dd`.
    package var date: String { (game.date ?? "").replacingOccurrences(of: "/", with: "-") }

    /// The name written in the game's lineup records for `player`, or his id.
    package func name(of player: PlayerID) -> String {
        let record =
            game.starters.first { $0.appearance.player == player }
            ?? game.substitutions.first { $0.appearance.player == player }
        return record.map { game.text($0.name) } ?? "\(player)"
    }

    /// The club of `side` as it was that day; `teams` (the season's `TEAMyyyy` file) names a club
    /// the team directory does not know.
    package func club(_ side: Side, teams: [String: TeamRecord] = [:]) -> Club {
        let code = team(side)
        return TeamDirectory.club(
            code, on: date, teamFile: teams[code].map { ($0.league, $0.city, $0.nickname) })
    }

    /// The team code of `side`.
    package func team(_ side: Side) -> String {
        (side == .away ? game.visitingTeam : game.homeTeam) ?? "?"
    }
}
