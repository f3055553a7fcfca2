import Baseball

/// Writes plays as rows in the format of Chadwick's `cwevent` with the columns of the reference
/// output in `shared/data/oracle`, so the two can be diffed line for line.
package enum CWEventCSV {
    package static let columns = [
        "GAME_ID", "AWAY_TEAM_ID", "INN_CT", "BAT_HOME_ID", "OUTS_CT", "BALLS_CT", "STRIKES_CT", "AWAY_SCORE_CT",
        "HOME_SCORE_CT", "BAT_ID", "RESP_BAT_ID", "PIT_ID", "RESP_PIT_ID", "BASE1_RUN_ID", "BASE2_RUN_ID",
        "BASE3_RUN_ID", "EVENT_TX", "EVENT_CD", "AB_FL", "H_CD", "EVENT_OUTS_CT", "RBI_CT", "BAT_DEST_ID",
        "RUN1_DEST_ID", "RUN2_DEST_ID", "RUN3_DEST_ID", "GAME_NEW_FL", "GAME_END_FL", "EVENT_ID",
    ]

    /// The header line, with its newline.
    package static var header: String {
        columns.map { "\"\($0)\"" }.joined(separator: ",") + "\n"
    }

    /// Appends one row per play of `game` to `output`. The game is replayed completely before
    /// anything is written, so a game that fails adds nothing.
    package static func appendRows(of game: GameRecord, to output: inout [UInt8]) throws(RetrosheetError) {
        let gameID = Array(game.id.utf8)
        let visitors = Array((game.visitingTeam ?? "").utf8)
        var rows: [UInt8] = []
        rows.reserveCapacity(game.events.count * 110)
        try game.source.withUnsafeBufferPointer { (buffer) throws(RetrosheetError) in
            _ = try GameReplay.run(game) { replayed, _ in
                let event = game.events[replayed.eventIndex]
                appendRow(
                    gameID: gameID, visitors: visitors, event: event, eventText: buffer.slice(event.text),
                    replayed: replayed, to: &rows)
            }
        }
        output.append(contentsOf: rows)
    }

    @inline(__always)
    static func appendRow(
        gameID: [UInt8], visitors: [UInt8], event: EventRecord, eventText: UnsafeBufferPointer<UInt8>,
        replayed: ReplayedPlay, to out: inout [UInt8]
    ) {
        let result = replayed.result
        let play = result.play
        quoted(gameID, &out)
        out.append(.comma)
        quoted(visitors, &out)
        out.append(.comma)
        number(Int(event.inning), &out)
        out.append(.comma)
        number(event.battingSide.rawValue, &out)
        out.append(.comma)
        number(result.outsBefore, &out)
        out.append(.comma)
        number(Int(event.count?.balls ?? 0), &out)
        out.append(.comma)
        number(Int(event.count?.strikes ?? 0), &out)
        out.append(.comma)
        number(result.scoreBefore.away, &out)
        out.append(.comma)
        number(result.scoreBefore.home, &out)
        out.append(.comma)
        player(event.batter, &out)
        player(result.responsibleBatter, &out)
        player(result.pitcher, &out)
        player(result.responsiblePitcher, &out)
        player(result.runnersBefore.first, &out)
        player(result.runnersBefore.second, &out)
        player(result.runnersBefore.third, &out)
        out.append(.quote)
        out.append(contentsOf: eventText)
        out.append(.quote)
        out.append(.comma)
        number(Int(play.eventType.rawValue), &out)
        out.append(.comma)
        flag(play.isAtBat, &out)
        number(play.eventType.hitValue, &out)
        out.append(.comma)
        number(play.outs, &out)
        out.append(.comma)
        number(play.runsBattedIn, &out)
        out.append(.comma)
        number(Int(play.advances.batter.rawValue), &out)
        out.append(.comma)
        number(Int(play.advances.first.rawValue), &out)
        out.append(.comma)
        number(Int(play.advances.second.rawValue), &out)
        out.append(.comma)
        number(Int(play.advances.third.rawValue), &out)
        out.append(.comma)
        flag(replayed.isFirstPlay, &out)
        flag(replayed.isLastPlay, &out)
        number(replayed.number, &out)
        out.append(.newline)
    }

    @inline(__always)
    private static func quoted(_ bytes: [UInt8], _ out: inout [UInt8]) {
        out.append(.quote)
        out.append(contentsOf: bytes)
        out.append(.quote)
    }

    @inline(__always)
    private static func player(_ id: PlayerID, _ out: inout [UInt8]) {
        out.append(.quote)
        id.write(to: &out)
        out.append(.quote)
        out.append(.comma)
    }

    @inline(__always)
    private static func flag(_ value: Bool, _ out: inout [UInt8]) {
        out.append(.quote)
        out.append(value ? UInt8(ascii: "T") : UInt8(ascii: "F"))
        out.append(.quote)
        out.append(.comma)
    }

    @inline(__always)
    private static func number(_ value: Int, _ out: inout [UInt8]) {
        if value < 10 && value >= 0 {
            out.append(UInt8(truncatingIfNeeded: value) &+ 0x30)
            return
        }
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) = (0, 0, 0, 0, 0, 0, 0, 0)
        var remaining = abs(value)
        var count = 0
        withUnsafeMutableBytes(of: &digits) { raw in
            while remaining > 0 && count < 8 {
                raw[count] = UInt8(truncatingIfNeeded: remaining % 10) &+ 0x30
                remaining /= 10
                count += 1
            }
            if value < 0 { out.append(UInt8(ascii: "-")) }
            while count > 0 {
                count -= 1
                out.append(raw[count])
            }
        }
    }
}
