import Baseball

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads the games of a Retrosheet event file (`.EVA`, `.EVN`) from its bytes.
///
/// Every record type is understood: `id`, `version`, `info`, `start`, `sub`, `play`, `com`,
/// `data`, `badj`, `padj`, `ladj`, `radj`, `presadj`. A line that cannot be read makes its game
/// fail with an error naming the file, line and text; reading resumes at the next `id`, so one
/// bad game never hides the others. Damage is forgiven by kind, as `cwevent` forgives it, each a
/// warning (`GameRecord.warnings`, with file and line) while the game is read: a record with more
/// fields than it is read from is read from its first ones; one with fewer than it needs is
/// skipped; a `version`, `com`, `badj`, `padj` or `ladj` record that cannot be read is skipped.
package struct EventFileReader: Sendable {
    package let file: String
    package let bytes: [UInt8]

    package init(file: String, bytes: [UInt8]) {
        self.file = file
        self.bytes = bytes
    }

    /// Reads the file at `path`.
    package init(path: String) throws(RetrosheetError) {
        self.file = path
        self.bytes = try FileBytes.read(path)
    }

    /// All games in the file, each either read or the first error that stopped it.
    package func games() -> [Result<GameRecord, RetrosheetError>] {
        var results: [Result<GameRecord, RetrosheetError>] = []
        forEachGame { results.append($0) }
        return results
    }

    /// Calls `body` with each game in file order.
    package func forEachGame(_ body: (Result<GameRecord, RetrosheetError>) -> Void) {
        bytes.withUnsafeBufferPointer { buffer in
            var builder: GameBuilder?
            var failed: RetrosheetError?
            var lineNumber = 0
            var position = 0
            let end = buffer.count

            func finish() {
                if let error = failed {
                    body(.failure(error))
                } else if let game = builder?.game {
                    body(.success(game))
                }
                builder = nil
                failed = nil
            }

            let base = buffer.baseAddress
            while position < end {
                lineNumber += 1
                let lineEnd: Int
                if let newline = memchr(base! + position, Int32(UInt8.newline), end - position) {
                    lineEnd = UnsafePointer(newline.assumingMemoryBound(to: UInt8.self)) - base!
                } else {
                    lineEnd = end
                }
                var contentEnd = lineEnd
                while contentEnd > position
                    && (buffer[contentEnd - 1] == .carriageReturn || buffer[contentEnd - 1] == 0x20
                        || buffer[contentEnd - 1] == 0x09)
                {
                    contentEnd -= 1
                }
                let line = ByteRange(start: position, end: contentEnd)
                position = lineEnd + 1
                if line.isEmpty { continue }

                let fields = RecordFields(buffer, line: line)
                let kind = RecordKind(buffer, fields[0])
                if kind == .id {
                    finish()
                    let id = fields.count > 1 ? buffer.string(fields[1]) : ""
                    if id.isEmpty {
                        failed = error(buffer, line, lineNumber, "an id record needs the game id")
                        builder = nil
                        continue
                    }
                    builder = GameBuilder(file: file, source: bytes, id: id, line: lineNumber)
                    if fields.count > 2 {
                        builder!.game.warnings.append(
                            error(
                                buffer, line, lineNumber,
                                GameBuilder.extraFields("an id", read: 1, found: fields.count - 1),
                                gameID: id))
                    }
                    continue
                }
                if failed != nil { continue }  // skipping the rest of a broken game
                guard builder != nil else {
                    failed = error(buffer, line, lineNumber, "record before the first id record")
                    finish()
                    continue
                }
                // A last line with no line end, short of its fields, is where a file was cut off.
                let cutOff = lineEnd == end
                switch builder!.add(kind, fields, buffer: buffer, line: lineNumber, cutOff: cutOff) {
                case nil: break
                case .fatal(let reason):
                    failed = error(buffer, line, lineNumber, reason, gameID: builder!.game.id)
                case .harmless(let reason), .readAnyway(let reason):
                    builder!.game.warnings.append(error(buffer, line, lineNumber, reason, gameID: builder!.game.id))
                }
            }
            finish()
        }
    }

    private func error(
        _ buffer: UnsafeBufferPointer<UInt8>, _ line: ByteRange, _ number: Int, _ reason: String,
        gameID: String? = nil
    ) -> RetrosheetError {
        RetrosheetError(file: file, line: number, text: buffer.string(line), reason: reason, gameID: gameID)
    }
}

/// Collects one game's records.
struct GameBuilder {
    var game: GameRecord
    /// Adjustments waiting for the next play record.
    private var pending = EventAdjustments()
    private var badjBatter = PlayerID.none

    init(file: String, source: [UInt8], id: String, line: Int) {
        game = GameRecord(file: file, source: source, id: id, line: line)
        // Sized for a nine-inning game so the arrays rarely grow.
        game.info.reserveCapacity(40)
        game.starters.reserveCapacity(20)
        game.events.reserveCapacity(200)
        game.substitutions.reserveCapacity(40)
    }

    /// What is wrong with a record.
    enum Damage: Equatable {
        /// The game cannot be read.
        case fatal(String)
        /// The record is skipped; the game is read without it.
        case harmless(String)
        /// The record is read anyway, as `cwevent` reads it (the reason says how).
        case readAnyway(String)
    }

    /// How many fields after its type a record is read from: the fewest it needs and the most
    /// it uses. As `cwevent` reads them (`cw_game_read`): by position, any further fields ignored,
    /// and a record without the fields it needs skipped. `com` takes any number. The records
    /// `addRecord` and `readPlay` read have these counts (but for a quoted field left open).
    static func fieldsRead(_ kind: RecordKind) -> (needed: Int, used: Int)? {
        switch kind {
        case .id, .version: (1, 1)
        case .info: (1, 2)
        case .start, .sub: (5, 5)
        case .play: (6, 6)
        case .badj, .padj, .ladj, .radj, .presadj: (2, 2)
        // The type and a value at least; the first seven values kept (cwevent reads any number).
        case .data: (2, RecordFields.capacity - 1)
        case .com, .unknown: nil
        }
    }

    /// The warning for a record with more fields than it is read from.
    static func extraFields(_ record: String, read: Int, found: Int) -> String {
        "\(record) record is read from \(read) field\(read == 1 ? "" : "s"), found \(found); "
            + "the rest \(found - read == 1 ? "is" : "are") ignored, as cwevent ignores them"
    }

    /// Adds one record; returns what is wrong with it, or nil. A record with more fields than it
    /// is read from is read from its first ones, and one with fewer than it needs is skipped,
    /// as `cwevent` reads them; each is a warning.
    mutating func add(
        _ kind: RecordKind, _ fields: RecordFields, buffer: UnsafeBufferPointer<UInt8>, line: Int, cutOff: Bool = false
    ) -> Damage? {
        var fields = fields
        var extra: String?
        if let read = Self.fieldsRead(kind), !fields.hasUnterminatedQuote {
            let found = fields.count - 1
            // Named only when damaged: most records are not.
            var record: String { kind == .info ? "an info" : "a \(buffer.string(fields[0]))" }
            if found < read.needed && cutOff {
                return .fatal("the file ends in the middle of \(record) record (no line end, \(found) of its fields)")
            }
            if found < read.needed {
                return .harmless(
                    "\(record) record needs \(read.needed) field\(read.needed == 1 ? "" : "s"), found \(found); "
                        + "the record is skipped, as cwevent skips it")
            }
            if found > read.used {
                extra = Self.extraFields(record, read: read.used, found: found)
                fields.keepFirst(read.used + 1)
            }
        }
        let damage = addRead(kind, fields, buffer: buffer, line: line)
        guard let extra else { return damage }
        switch damage {
        case nil: return .readAnyway(extra)
        case .readAnyway(let reason): return .readAnyway("\(extra); \(reason)")
        case .harmless, .fatal: return damage
        }
    }

    /// Adds one record of the fields it is read from.
    private mutating func addRead(
        _ kind: RecordKind, _ fields: RecordFields, buffer: UnsafeBufferPointer<UInt8>, line: Int
    ) -> Damage? {
        switch kind {
        case .com:
            guard fields.count >= 2 else { return .harmless("a com record needs its text; the record is skipped") }
        case .info:
            guard !fields[1].isEmpty else { return .harmless("an info record needs a key; the record is skipped") }
        case .play:
            return addPlay(fields, buffer, line)
        case .badj, .padj, .ladj:
            // A hand or a batting slot out of order changes no play: a record that cannot be read
            // is skipped (cwevent reads its first character, or -1 for a slot it cannot read).
            return addRecord(kind, fields, buffer: buffer, line: line).map { .harmless("\($0); the record is skipped") }
        default:
            break
        }
        return addRecord(kind, fields, buffer: buffer, line: line).map(Damage.fatal)
    }

    /// Adds one record; returns why it cannot be read, or nil.
    private mutating func addRecord(
        _ kind: RecordKind, _ fields: RecordFields, buffer: UnsafeBufferPointer<UInt8>, line: Int
    ) -> String? {
        if fields.hasUnterminatedQuote { return "a quoted field has no closing quote" }
        switch kind {
        case .play:
            return nil  // `add` reads plays (they may be read anyway, with a warning)
        case .sub, .start:
            let isStart = kind == .start
            guard let player = PlayerID(ascii: buffer.slice(fields[1])) else {
                return "'\(buffer.string(fields[1]))' is not a player id"
            }
            guard let team = buffer.integer(fields[3]), team <= 1 else {
                return "team must be 0 (visitors) or 1 (home), not '\(buffer.string(fields[3]))'"
            }
            guard let slot = buffer.integer(fields[4]), slot <= 9 else {
                return "batting slot must be 0-9, not '\(buffer.string(fields[4]))'"
            }
            guard let position = buffer.integer(fields[5]), position >= 1, position <= 12 else {
                return "position must be 1-12, not '\(buffer.string(fields[5]))'"
            }
            let record = LineupRecord(
                appearance: Appearance(
                    player: player, side: team == 0 ? .away : .home, battingSlot: UInt8(slot),
                    position: UInt8(position)),
                name: fields[2], line: Int32(line))
            if isStart {
                guard game.events.isEmpty else { return "a start record after the first play" }
                game.starters.append(record)
            } else {
                guard !game.events.isEmpty else { return "a sub record before the first play" }
                game.substitutions.append(record)
                game.events[game.events.count - 1].substitutionCount += 1
            }
            return nil
        case .com:
            // To the last field kept (a comment of more than eight fields unquoted ends there).
            let last = fields[min(fields.count, RecordFields.capacity) - 1]
            let text = ByteRange(start: Int(fields[1].start), end: Int(last.end))
            if game.events.isEmpty {
                game.comments.append(text)
            } else {
                game.eventComments.append(text)
                game.events[game.events.count - 1].commentCount += 1
            }
            return nil
        case .info:
            let value = fields.count == 3 ? buffer.string(fields[2]) : ""
            game.info.append(InfoEntry(key: buffer.string(fields[1]), value: value))
            return nil
        case .version:
            game.version = buffer.string(fields[1])
            return nil
        case .data:
            game.data.append((1..<fields.count).map { buffer.string(fields[$0]) })
            return nil
        case .badj:
            guard let batter = PlayerID(ascii: buffer.slice(fields[1])),
                let hand = hand(fields[2], buffer)
            else { return "a badj record needs a player id and a hand (L or R)" }
            pending.batterHand = hand
            badjBatter = batter
            return nil
        case .padj:
            guard let pitcher = PlayerID(ascii: buffer.slice(fields[1])),
                let hand = hand(fields[2], buffer)
            else { return "a padj record needs a player id and a hand (L or R)" }
            pending.pitcherHand = hand
            pending.pitcherHandPlayer = pitcher
            return nil
        case .ladj:
            guard let team = buffer.integer(fields[1]), team <= 1,
                let slot = buffer.integer(fields[2]), slot >= 1, slot <= 9
            else { return "a ladj record needs a team (0 or 1) and a batting slot (1-9)" }
            pending.nextBattingSlot = UInt8(slot)
            return nil
        case .radj:
            guard let runner = PlayerID(ascii: buffer.slice(fields[1])),
                let base = buffer.integer(fields[2]), base >= 1, base <= 3
            else { return "a radj record needs a player id and a base (1-3)" }
            pending.placedRunner = runner
            pending.placedRunnerBase = UInt8(base)
            pending.placedRunnerLine = Int32(line)
            pending.placedRunnerRecord = ByteRange(start: Int(fields[0].start), end: Int(fields[2].end))
            return nil
        case .presadj:
            guard let pitcher = PlayerID(ascii: buffer.slice(fields[1])),
                let base = buffer.integer(fields[2]), base >= 1, base <= 3
            else { return "a presadj record needs a pitcher id and a base (1-3)" }
            pending.responsiblePitcher = pitcher
            pending.responsiblePitcherBase = UInt8(base)
            return nil
        case .id:
            return "an id record inside a game"
        case .unknown:
            return "unknown record type '\(buffer.string(fields[0]))'"
        }
    }

    private mutating func addPlay(_ fields: RecordFields, _ buffer: UnsafeBufferPointer<UInt8>, _ line: Int)
        -> Damage?
    {
        if fields.hasUnterminatedQuote { return .fatal("a quoted field has no closing quote") }
        var tolerated: [String] = []
        switch readPlay(fields, buffer, line, tolerated: &tolerated) {
        case .some(let reason): return .fatal(reason)
        case nil: return tolerated.isEmpty ? nil : .readAnyway(tolerated.joined(separator: "; "))
        }
    }

    private mutating func readPlay(
        _ fields: RecordFields, _ buffer: UnsafeBufferPointer<UInt8>, _ line: Int, tolerated: inout [String]
    ) -> String? {
        guard game.starters.count >= 2 else { return "a play record before the starting lineups" }
        guard let inning = buffer.integer(fields[1]), inning >= 1, inning <= 99 else {
            return "inning must be a number from 1, not '\(buffer.string(fields[1]))'"
        }
        guard let team = buffer.integer(fields[2]), team <= 1 else {
            return "batting team must be 0 or 1, not '\(buffer.string(fields[2]))'"
        }
        guard let batter = PlayerID(ascii: buffer.slice(fields[3])) else {
            return "'\(buffer.string(fields[3]))' is not a player id"
        }
        // The count: two characters, balls then strikes, `??` when unknown. As `cwevent` reads
        // it, a longer field counts by its first two characters, and one with a `?` in them, or
        // shorter than two, is unknown (0-0 in its rows); other damage is read the same way and
        // said: `22.` is 2-2, `100` is 1-0, `??00` unknown, `.00` unknown (cwevent writes its '.').
        let countField = fields[4]
        var count: PitchCount?
        if countField.count >= 2 {
            let balls = buffer[Int(countField.start)]
            let strikes = buffer[Int(countField.start) + 1]
            let question = balls == UInt8(ascii: "?") || strikes == UInt8(ascii: "?")
            if balls.isDigit && strikes.isDigit {
                // Real files hold the odd impossible count ("42"); it is kept as written.
                count = PitchCount(balls: balls &- 0x30, strikes: strikes &- 0x30)
            }
            if countField.count > 2 || (!question && count == nil) {
                let shown = count.map { "\($0.balls)-\($0.strikes)" } ?? "an unknown count"
                tolerated.append(
                    "count '\(buffer.string(countField))' is not two digits or ??; read as \(shown) "
                        + "(from its first two characters, as cwevent reads it)")
            }
        }
        let text = fields[6]
        guard !text.isEmpty else { return "a play record needs an event" }
        let eventText = buffer.slice(text)
        if EventTextParser.hasParenthesisAfterAdvances(eventText) {
            if let note = EventTextParser.unknownAdvanceNote(eventText) {
                tolerated.append(
                    "'(\(note))' is not a note a runner advance takes; the advance is read without it (cwevent "
                        + "stops reading the event there)")
            }
            if let flag = EventTextParser.unknownCreditFlag(eventText) {
                tolerated.append(
                    "'/\(flag)' is not a modifier a fielding credit takes; the credit is read without it (cwevent "
                        + "stops reading the event there)")
            }
        }

        var record = EventRecord(
            line: Int32(line), inning: Int32(inning), battingSide: team == 0 ? .away : .home, batter: batter,
            count: count, pitches: fields[5], text: text, isNoPlay: buffer.equals(text, "NP"),
            substitutionStart: UInt32(game.substitutions.count), commentStart: UInt32(game.eventComments.count))
        if pending.batterHand != 0 && badjBatter != batter {
            // A batting-hand adjustment lasts while the same batter is up.
            pending.batterHand = 0
            badjBatter = .none
        }
        if !pending.isEmpty {
            record.adjustmentIndex = Int32(game.adjustments.count)
            game.adjustments.append(pending)
        }
        let batterHand = pending.batterHand
        pending = EventAdjustments()
        pending.batterHand = batterHand
        game.events.append(record)
        return nil
    }

    private func hand(_ range: ByteRange, _ buffer: UnsafeBufferPointer<UInt8>) -> UInt8? {
        guard range.count == 1 else { return nil }
        let byte = buffer[Int(range.start)]
        return byte == UInt8(ascii: "L") || byte == UInt8(ascii: "R") || byte == UInt8(ascii: "B") ? byte : nil
    }
}

/// The record types of an event file.
enum RecordKind {
    case id, version, info, start, sub, play, com, data, badj, padj, ladj, radj, presadj, unknown

    /// Classifies the first field of a line, deciding on its first byte and length before
    /// comparing text.
    init(_ buffer: UnsafeBufferPointer<UInt8>, _ field: ByteRange) {
        guard !field.isEmpty else {
            self = .unknown
            return
        }
        switch (buffer[Int(field.start)], field.count) {
        case (UInt8(ascii: "p"), 4):
            self = buffer.equals(field, "play") ? .play : buffer.equals(field, "padj") ? .padj : .unknown
        case (UInt8(ascii: "s"), 3): self = buffer.equals(field, "sub") ? .sub : .unknown
        case (UInt8(ascii: "s"), 5): self = buffer.equals(field, "start") ? .start : .unknown
        case (UInt8(ascii: "i"), 4): self = buffer.equals(field, "info") ? .info : .unknown
        case (UInt8(ascii: "i"), 2): self = buffer.equals(field, "id") ? .id : .unknown
        case (UInt8(ascii: "c"), 3): self = buffer.equals(field, "com") ? .com : .unknown
        case (UInt8(ascii: "d"), 4): self = buffer.equals(field, "data") ? .data : .unknown
        case (UInt8(ascii: "v"), 7): self = buffer.equals(field, "version") ? .version : .unknown
        case (UInt8(ascii: "b"), 4): self = buffer.equals(field, "badj") ? .badj : .unknown
        case (UInt8(ascii: "l"), 4): self = buffer.equals(field, "ladj") ? .ladj : .unknown
        case (UInt8(ascii: "r"), 4): self = buffer.equals(field, "radj") ? .radj : .unknown
        case (UInt8(ascii: "p"), 7): self = buffer.equals(field, "presadj") ? .presadj : .unknown
        default: self = .unknown
        }
    }
}
