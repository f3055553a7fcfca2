import Baseball

extension GameRecord {
    /// The game as normalised updates, in order: each play record (with the adjustments before
    /// it), then the substitutions after it. A malformed event throws with its file and line.
    package func updates() throws(RetrosheetError) -> [GameUpdate] {
        var updates: [GameUpdate] = []
        updates.reserveCapacity(events.count + substitutions.count)
        for event in events {
            var record = PlayUpdate(
                inning: Int(event.inning), battingSide: event.battingSide, batter: event.batter, count: event.count,
                play: nil)
            let adjustments = adjustments(before: event)
            record.nextBattingSlot = adjustments.nextBattingSlot
            if !adjustments.placedRunner.isNone {
                record.placedRunner = (adjustments.placedRunner, Int(adjustments.placedRunnerBase))
            }
            if !adjustments.responsiblePitcher.isNone {
                record.responsiblePitcher = (adjustments.responsiblePitcher, Int(adjustments.responsiblePitcherBase))
            }
            if !event.isNoPlay {
                let parsed: Result<Play, EventTextError> = source.withUnsafeBufferPointer { buffer in
                    Result { () throws(EventTextError) in try EventTextParser.parse(buffer.slice(event.text)) }
                }
                switch parsed {
                case .success(let play): record.play = play
                case .failure(let error):
                    throw RetrosheetError(
                        file: file, line: Int(event.line), text: lineText(containing: event.text),
                        reason: "malformed event: \(error)", gameID: id)
                }
            }
            updates.append(.play(record))
            updates += substitutions(after: event).map { .substitution($0.appearance) }
        }
        return updates
    }
}
