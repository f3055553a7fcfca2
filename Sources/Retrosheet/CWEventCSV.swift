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

    /// Appends one row per play of `game` to `output` and returns the number of plays. The game is
    /// replayed completely before anything is written, so a game that fails adds nothing.
    @discardableResult
    package static func appendRows(of game: GameRecord, to output: inout ByteWriter) throws(RetrosheetError) -> Int {
        let start = output.count
        var plays = 0
        let gameID = Array(game.id.utf8)
        let visitors = Array((game.visitingTeam ?? "").utf8)
        do throws(RetrosheetError) {
            try game.source.withUnsafeBufferPointer { (buffer) throws(RetrosheetError) in
                try gameID.withUnsafeBufferPointer { gameID throws(RetrosheetError) in
                    try visitors.withUnsafeBufferPointer { visitors throws(RetrosheetError) in
                        _ = try GameReplay.run(game) { replayed in
                            plays += 1
                            appendRow(
                                gameID: gameID, visitors: visitors, game: game, buffer: buffer, replayed: replayed,
                                to: &output)
                        }
                    }
                }
            }
        } catch {
            output.truncate(to: start)
            throw error
        }
        return plays
    }

    /// Appends the rows of `game` to a new array (tests, small exports).
    package static func rows(of game: GameRecord) throws(RetrosheetError) -> [UInt8] {
        var writer = ByteWriter()
        try appendRows(of: game, to: &writer)
        return writer.bytes
    }

    /// The longest row: fixed columns need under 200 bytes, plus the event text (at most 256).
    private static let maximumRowLength = 512

    private static func appendRow(
        gameID: UnsafeBufferPointer<UInt8>, visitors: UnsafeBufferPointer<UInt8>, game: GameRecord,
        buffer: UnsafeBufferPointer<UInt8>, replayed: ReplayedPlay, to writer: inout ByteWriter
    ) {
        let (inning, side, count, text, batter) = game.events.withUnsafeBufferPointer { events in
            let event = events.baseAddress! + replayed.eventIndex
            return (
                event.pointee.inning, event.pointee.battingSide, event.pointee.count, event.pointee.text,
                event.pointee.batter
            )
        }
        let eventText = buffer.slice(text)
        writer.write(reserving: maximumRowLength + gameID.count + visitors.count) { out in
            let result = replayed.result
            let quote = UInt8.quote
            let comma = UInt8.comma
            out.put(quote)
            out.put(gameID)
            out.put(quote)
            out.put(comma)
            out.put(quote)
            out.put(visitors)
            out.put(quote)
            out.put(comma)
            out.put(decimal: Int(inning))
            out.put(comma)
            out.put(decimal: side.rawValue)
            out.put(comma)
            out.put(decimal: result.outsBefore)
            out.put(comma)
            out.put(decimal: Int(count?.balls ?? 0))
            out.put(comma)
            out.put(decimal: Int(count?.strikes ?? 0))
            out.put(comma)
            out.put(decimal: result.scoreBefore.away)
            out.put(comma)
            out.put(decimal: result.scoreBefore.home)
            out.put(comma)
            player(batter, &out)
            player(result.responsibleBatter, &out)
            player(result.pitcher, &out)
            player(result.responsiblePitcher, &out)
            player(result.runnersBefore.first, &out)
            player(result.runnersBefore.second, &out)
            player(result.runnersBefore.third, &out)
            out.put(quote)
            out.put(eventText)
            out.put(quote)
            out.put(comma)
            let play = result.play
            out.put(decimal: Int(play.eventType.rawValue))
            out.put(comma)
            flag(play.isAtBat, &out)
            out.put(decimal: play.eventType.hitValue)
            out.put(comma)
            out.put(decimal: play.outs)
            out.put(comma)
            out.put(decimal: play.runsBattedIn)
            out.put(comma)
            out.put(decimal: Int(play.advances.batter.rawValue))
            out.put(comma)
            out.put(decimal: Int(play.advances.first.rawValue))
            out.put(comma)
            out.put(decimal: Int(play.advances.second.rawValue))
            out.put(comma)
            out.put(decimal: Int(play.advances.third.rawValue))
            out.put(comma)
            flag(replayed.isFirstPlay, &out)
            flag(replayed.isLastPlay, &out)
            out.put(decimal: replayed.number)
            out.put(.newline)
        }
    }

    @inline(__always)
    private static func player(_ id: PlayerID, _ out: inout ByteCursor) {
        out.put(.quote)
        out.put(packed: id.rawValue)
        out.put(.quote)
        out.put(.comma)
    }

    @inline(__always)
    private static func flag(_ value: Bool, _ out: inout ByteCursor) {
        out.put(.quote)
        out.put(value ? UInt8(ascii: "T") : UInt8(ascii: "F"))
        out.put(.quote)
        out.put(.comma)
    }
}
