import Baseball

/// Where an update came from in its file: the record to name when the update does not fit.
package struct RecordPlace: Sendable {
    /// Index of the play record in `GameRecord.events` (of the one a substitution follows).
    package var eventIndex: Int
    package var line: Int
    /// The record's text (its whole line is quoted in errors).
    package var text: ByteRange
    /// For a play record with a runner put on base before it (`radj`): that record.
    package var placedRunner: (line: Int, text: ByteRange)?
}

extension GameRecord {
    /// The game as normalised updates, in order: each play record (with the adjustments before
    /// it), then the substitutions after it. The one place Retrosheet's records become updates;
    /// a malformed event throws with its file and line.
    package func forEachUpdate(
        _ body: (GameUpdate, RecordPlace) throws(RetrosheetError) -> Void
    ) throws(RetrosheetError) {
        try forEachUpdate(
            play: { (record, place) throws(RetrosheetError) in try body(.play(record), place) },
            substitution: { (appearance, place) throws(RetrosheetError) in
                try body(.substitution(appearance), place)
            })
    }

    /// The same updates, a play record's and a substitution's each to its own `body`: the path of
    /// every play of a season (`GameReplay.run`), where wrapping each record in a `GameUpdate` to
    /// take it apart again cost a sixth of the time of a season's bids.
    package func forEachUpdate(
        play: (borrowing PlayUpdate, RecordPlace) throws(RetrosheetError) -> Void,
        substitution: (Appearance, RecordPlace) throws(RetrosheetError) -> Void
    ) throws(RetrosheetError) {
        try source.withUnsafeBufferPointer { (buffer) throws(RetrosheetError) in
            try events.withUnsafeBufferPointer { (events) throws(RetrosheetError) in
                for index in events.indices {
                    let event = events.baseAddress! + index
                    var record = PlayUpdate(
                        inning: Int(event.pointee.inning), battingSide: event.pointee.battingSide,
                        batter: event.pointee.batter, count: event.pointee.count, play: nil)
                    record.pitches = Self.pitches(buffer.slice(event.pointee.pitches), count: event.pointee.count)
                    var place = RecordPlace(
                        eventIndex: index, line: Int(event.pointee.line), text: event.pointee.text)
                    if event.pointee.adjustmentIndex >= 0 {
                        let adjustments = self.adjustments[Int(event.pointee.adjustmentIndex)]
                        record.nextBattingSlot = adjustments.nextBattingSlot
                        if !adjustments.placedRunner.isNone {
                            record.placedRunner = (adjustments.placedRunner, Int(adjustments.placedRunnerBase))
                            place.placedRunner = (Int(adjustments.placedRunnerLine), adjustments.placedRunnerRecord)
                        }
                        if !adjustments.responsiblePitcher.isNone {
                            record.responsiblePitcher = (
                                adjustments.responsiblePitcher, Int(adjustments.responsiblePitcherBase)
                            )
                        }
                    }
                    if !event.pointee.isNoPlay {
                        do throws(EventTextError) {
                            record.play = try EventTextParser.parse(buffer.slice(event.pointee.text))
                        } catch {
                            throw RetrosheetError(
                                file: file, line: place.line,
                                text: buffer.string(buffer.lineRange(containing: place.text)),
                                reason: "malformed event: \(error)", gameID: id)
                        }
                    }
                    try play(record, place)
                    if event.pointee.substitutionCount > 0 {
                        for entered in substitutions(after: event.pointee) {
                            try substitution(
                                entered.appearance,
                                RecordPlace(eventIndex: index, line: Int(entered.line), text: entered.name))
                        }
                    }
                }
            }
        }
    }

    /// Pitches in a play record's pitch sequence: every letter but `A` (an automatic strike), `N`
    /// (no pitch, on a balk or interference) and `V` (an automatic ball); pickoff throws (`1`-`3`),
    /// `+`, `*`, `.` and `>` are not pitches. An empty sequence is no pitch yet (the `NP` record
    /// of a change between innings, count `00`); nil for a sequence with `?` or with a count
    /// not known, as in seasons scored without pitches.
    static func pitches(_ sequence: UnsafeBufferPointer<UInt8>, count: PitchCount?) -> UInt8? {
        guard count != nil else { return nil }
        var thrown = 0
        var unknown = false
        for byte in sequence {
            switch byte {
            case UInt8(ascii: "B"), UInt8(ascii: "C"), UInt8(ascii: "F"), UInt8(ascii: "H"), UInt8(ascii: "I"),
                UInt8(ascii: "K"), UInt8(ascii: "L"), UInt8(ascii: "M"), UInt8(ascii: "O"), UInt8(ascii: "P"),
                UInt8(ascii: "Q"), UInt8(ascii: "R"), UInt8(ascii: "S"), UInt8(ascii: "T"), UInt8(ascii: "U"),
                UInt8(ascii: "X"), UInt8(ascii: "Y"):
                thrown += 1
            case UInt8(ascii: "?"): unknown = true
            default: break
            }
        }
        return unknown ? nil : UInt8(clamping: thrown)
    }

    /// The game's updates, in order (see `forEachUpdate(_:)`).
    package func updates() throws(RetrosheetError) -> [GameUpdate] {
        var updates: [GameUpdate] = []
        updates.reserveCapacity(events.count + substitutions.count)
        try forEachUpdate { update, _ in updates.append(update) }
        return updates
    }
}
