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
}

/// Drives a game record through the engine, play by play.
package enum GameReplay {
    /// Replays `game`, calling `body` after each play with what it did and the state after it.
    /// Returns the final state. Any play, substitution or adjustment that does not fit the game
    /// throws an error naming the file, line and text.
    @discardableResult
    ///
    /// `onSubstitution` sees each player entering, with the number of plays made before he came in.
    package static func run(
        _ game: GameRecord, _ body: (ReplayedPlay) -> Void = { _ in },
        onSubstitution: (Appearance, _ playsBefore: Int) -> Void = { _, _ in }
    ) throws(RetrosheetError) -> GameState {
        try validateStarters(game)
        let outcome = game.source.withUnsafeBufferPointer { buffer in
            game.events.withUnsafeBufferPointer { events in
                replay(game, buffer: buffer, events: events, onSubstitution, body)
            }
        }
        return try outcome.get()
    }

    private static func replay(
        _ game: GameRecord, buffer: UnsafeBufferPointer<UInt8>, events: UnsafeBufferPointer<EventRecord>,
        _ onSubstitution: (Appearance, Int) -> Void, _ body: (ReplayedPlay) -> Void
    ) -> Result<GameState, RetrosheetError> {
        var state = GameState(starters: game.startingAppearances, homeBatsFirst: game.homeBatsFirst)
        var lastPlay = events.count - 1
        while lastPlay >= 0 && events[lastPlay].isNoPlay { lastPlay -= 1 }
        var seenPlay = false
        for index in events.indices {
            let event = events.baseAddress! + index
            var record = PlayUpdate(
                inning: Int(event.pointee.inning), battingSide: event.pointee.battingSide, batter: event.pointee.batter,
                count: event.pointee.count, play: nil)
            var placedRunnerLine = 0
            var placedRunnerRecord = ByteRange.empty
            if event.pointee.adjustmentIndex >= 0 {
                let adjustments = game.adjustments[Int(event.pointee.adjustmentIndex)]
                record.nextBattingSlot = adjustments.nextBattingSlot
                if !adjustments.placedRunner.isNone {
                    record.placedRunner = (adjustments.placedRunner, Int(adjustments.placedRunnerBase))
                    placedRunnerLine = Int(adjustments.placedRunnerLine)
                    placedRunnerRecord = adjustments.placedRunnerRecord
                }
                if !adjustments.responsiblePitcher.isNone {
                    record.responsiblePitcher = (
                        adjustments.responsiblePitcher, Int(adjustments.responsiblePitcherBase)
                    )
                }
            }
            do throws(GameStateError) {
                try state.begin(record)
            } catch {
                return .failure(Self.error(game, buffer, line: placedRunnerLine, at: placedRunnerRecord, "\(error)"))
            }
            if !event.pointee.isNoPlay {
                let play: Play
                do throws(EventTextError) {
                    play = try EventTextParser.parse(buffer.slice(event.pointee.text))
                } catch {
                    return .failure(
                        Self.error(
                            game, buffer, line: Int(event.pointee.line), at: event.pointee.text,
                            "malformed event: \(error)"))
                }
                do throws(GameStateError) {
                    // Built in place around the result, which saves copying it per play.
                    body(
                        ReplayedPlay(
                            eventIndex: index, number: state.playCount + 1, isFirstPlay: !seenPlay,
                            isLastPlay: index == lastPlay, result: try state.apply(play, batter: event.pointee.batter)))
                    seenPlay = true
                } catch {
                    return .failure(
                        Self.error(game, buffer, line: Int(event.pointee.line), at: event.pointee.text, "\(error)"))
                }
            }
            if event.pointee.substitutionCount > 0 {
                for substitution in game.substitutions(after: event.pointee) {
                    do throws(GameStateError) {
                        try state.apply(substitution.appearance)
                        onSubstitution(substitution.appearance, state.playCount)
                    } catch {
                        return .failure(
                            Self.error(game, buffer, line: Int(substitution.line), at: substitution.name, "\(error)"))
                    }
                }
            }
        }
        return .success(state)
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

    private static func error(
        _ game: GameRecord, _ buffer: UnsafeBufferPointer<UInt8>, line: Int, at range: ByteRange, _ reason: String
    ) -> RetrosheetError {
        RetrosheetError(
            file: game.file, line: line, text: buffer.string(buffer.lineRange(containing: range)), reason: reason,
            gameID: game.id)
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
