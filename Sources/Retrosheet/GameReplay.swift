import Baseball

/// One play of a replayed game, with where it came from.
package struct ReplayedPlay: Sendable {
    /// Index of the play record in `GameRecord.events`.
    package var eventIndex: Int
    /// 1-based number of the play in the game (substitution placeholders are not counted).
    package var number: Int
    package var isFirstPlay: Bool
    package var isLastPlay: Bool
    package var result: PlayResult
    /// Pitches in the record's pitch sequence (cumulative in the plate appearance); nil unknown.
    package var pitches: UInt8?
}

/// Drives a game record through the engine, play by play: its updates (the one translation,
/// `GameRecord.forEachUpdate`) into one `GameEngine`, with errors that name the file, line and
/// text.
package enum GameReplay {
    /// Replays `game`, calling `body` after each play with what it did, and returns the engine at
    /// the end (not finished: whether the game is over is the caller's to say). Any play,
    /// substitution or adjustment that does not fit the game throws an error naming the file, line
    /// and text. `followsBids` follows both no-hit bids too; `onSubstitution` sees each player
    /// entering, with the number of plays made before he came in.
    @discardableResult
    package static func run(
        _ game: GameRecord, followsBids: Bool = false, _ body: (ReplayedPlay) -> Void = { _ in },
        onSubstitution: (Appearance, _ playsBefore: Int) -> Void = { _, _ in }
    ) throws(RetrosheetError) -> GameEngine {
        try validateStarters(game)
        var engine = GameEngine(
            starters: game.startingAppearances, homeBatsFirst: game.homeBatsFirst, followsBids: followsBids)
        var lastPlay = game.events.count - 1
        while lastPlay >= 0 && game.events[lastPlay].isNoPlay { lastPlay -= 1 }
        var seenPlay = false
        func failure(_ error: GameStateError, at place: RecordPlace) -> RetrosheetError {
            let record = (line: place.line, text: place.text)
            let at = error.concernsPlacedRunner ? place.placedRunner ?? record : record
            return RetrosheetError(
                file: game.file, line: at.line, text: game.lineText(containing: at.text), reason: "\(error)",
                gameID: game.id)
        }
        try game.forEachUpdate(
            play: { (record, place) throws(RetrosheetError) in
                do throws(GameStateError) {
                    try engine.apply(play: record) { result, number in
                        body(
                            ReplayedPlay(
                                eventIndex: place.eventIndex, number: number, isFirstPlay: !seenPlay,
                                isLastPlay: place.eventIndex == lastPlay, result: copy result,
                                pitches: record.pitches))
                        seenPlay = true
                    }
                } catch {
                    throw failure(error, at: place)
                }
            },
            substitution: { (appearance, place) throws(RetrosheetError) in
                do throws(GameStateError) {
                    try engine.apply(.substitution(appearance))
                } catch {
                    throw failure(error, at: place)
                }
                onSubstitution(appearance, engine.state.playCount)
            })
        return engine
    }

    /// Both teams need batting slots 1-9 and positions 1-9 filled by `start` records.
    private static func validateStarters(_ game: GameRecord) throws(RetrosheetError) {
        for side in Side.allCases {
            var slots = 0
            var positions = 0
            for starter in game.starters where starter.appearance.side == side {
                let appearance = starter.appearance
                let slotBit = 1 << Int(appearance.battingSlot)
                let positionBit = 1 << Int(appearance.position)
                if slots & slotBit != 0 && appearance.battingSlot != 0 || positions & positionBit != 0 {
                    throw RetrosheetError(
                        file: game.file, line: Int(starter.line), text: game.lineText(containing: starter.name),
                        reason: "two starters share a batting slot or position", gameID: game.id)
                }
                slots |= slotBit
                positions |= positionBit
            }
            let missingSlots = (1...9).filter { slots & (1 << $0) == 0 }
            let missingPositions = (1...9).filter { positions & (1 << $0) == 0 }
            if !missingSlots.isEmpty || !missingPositions.isEmpty {
                let team = side == .away ? "visiting" : "home"
                throw RetrosheetError(
                    file: game.file, line: game.line, text: "id,\(game.id)",
                    reason:
                        "the \(team) team's starting lineup is incomplete (missing batting slots \(missingSlots), positions \(missingPositions))",
                    gameID: game.id)
            }
        }
    }
}

extension GameRecord {
    /// The whole line of the file that contains `range`.
    func lineText(containing range: ByteRange) -> String {
        source.withUnsafeBufferPointer { $0.string($0.lineRange(containing: range)) }
    }
}

extension UnsafeBufferPointer<UInt8> {
    func lineRange(containing range: ByteRange) -> ByteRange {
        var start = Int(range.start)
        while start > 0 && self[start - 1] != .newline { start -= 1 }
        var end = Int(range.end)
        while end < count && self[end] != .newline && self[end] != .carriageReturn { end += 1 }
        return ByteRange(start: start, end: end)
    }
}
