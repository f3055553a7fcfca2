import Baseball

/// One game of an event file, as written: header, lineups, and the play records in order with
/// what is attached to each. Text fields are byte ranges into `source`, which shares the file's
/// storage, so reading a season allocates little.
package struct GameRecord: Sendable {
    /// The file the game was read from.
    package var file: String
    /// The file's bytes (shared, not copied); every `ByteRange` indexes into it.
    package var source: [UInt8]
    /// The 12-character game id, e.g. `CHA202008250`.
    package var id: String
    /// Line of the `id` record.
    package var line: Int
    package var version: String?
    package var info: [InfoEntry] = []
    package var starters: [LineupRecord] = []
    package var events: [EventRecord] = []
    /// `sub` records after plays, in file order; each event names its share.
    package var substitutions: [LineupRecord] = []
    /// `com` records after plays, in file order; each event names its share.
    package var eventComments: [ByteRange] = []
    /// Adjustments that precede plays; an event names its entry, if any.
    package var adjustments: [EventAdjustments] = []
    /// Comments before the first play.
    package var comments: [ByteRange] = []
    /// `data` records (earned runs by pitcher): the fields after the record type.
    package var data: [[String]] = []
    /// Damaged records the game was read without (a version, a comment, an info key it is not
    /// made of), each with its file and line.
    package var warnings: [RetrosheetError] = []

    /// The value of an `info` record; the last one wins when a key repeats.
    package func info(_ key: String) -> String? {
        info.last(where: { $0.key == key })?.value
    }

    package var visitingTeam: String? { info("visteam") }
    package var homeTeam: String? { info("hometeam") }
    /// `yyyy/mm/dd` as written.
    package var date: String? { info("date") }
    /// Whether the home team batted first (games played at the visitors' park in 2020).
    package var homeBatsFirst: Bool { info("htbf") == "true" }
    /// Scheduled innings (7 for 2020-2021 doubleheader games), 9 when absent.
    package var scheduledInnings: Int { info("innings").flatMap { Int($0) } ?? 9 }

    /// MLB's game type: `info,gametype` in the newer files (`regular`, `worldseries` ...), else
    /// `R` — the event files of a regular season.
    package var gameType: String {
        switch info("gametype")?.lowercased() {
        case "wildcard": "F"
        case "divisionseries": "D"
        case "lcs": "L"
        case "worldseries": "W"
        case "allstar": "A"
        case "exhibition", "preseason": "S"
        default: "R"
        }
    }

    /// The date (`yyyy-mm-dd`) a suspended game was completed on: the comment
    /// `Suspend=yyyymmdd,park,visitor score,home score,outs` before the first play (its first
    /// field is the day the game resumed). Nil for a game played in one day.
    package var completionDate: String? {
        for range in comments {
            let text = self.text(range)
            guard text.hasPrefix("Suspend="), text.count >= 16 else { continue }
            let digits = Array(text.dropFirst(8).prefix(8))
            guard digits.allSatisfy(\.isNumber) else { continue }
            let date = "\(String(digits[0..<4]))-\(String(digits[4..<6]))-\(String(digits[6..<8]))"
            let played = self.date.map { $0.replacingOccurrences(of: "/", with: "-") }
            return date == played ? nil : date
        }
        return nil
    }

    /// The text of `range` (an event, a comment, a name).
    package func text(_ range: ByteRange) -> String {
        source.withUnsafeBufferPointer { $0.string(range) }
    }

    /// The starting lineups as the engine takes them.
    package var startingAppearances: [Appearance] { starters.map(\.appearance) }

    /// The substitutions that follow `event`.
    package func substitutions(after event: EventRecord) -> ArraySlice<LineupRecord> {
        let start = Int(event.substitutionStart)
        return substitutions[start..<start + Int(event.substitutionCount)]
    }

    /// The comments that follow `event`.
    package func comments(after event: EventRecord) -> ArraySlice<ByteRange> {
        let start = Int(event.commentStart)
        return eventComments[start..<start + Int(event.commentCount)]
    }

    /// The adjustments in force from `event` on (empty when none).
    package func adjustments(before event: EventRecord) -> EventAdjustments {
        event.adjustmentIndex >= 0 ? adjustments[Int(event.adjustmentIndex)] : EventAdjustments()
    }
}

/// An `info` record.
package struct InfoEntry: Sendable, Hashable {
    package var key: String
    package var value: String
}

/// A `start` or `sub` record.
package struct LineupRecord: Sendable, Hashable {
    package var appearance: Appearance
    package var name: ByteRange
    package var line: Int32
}

/// A `play` record with the records that follow it up to the next play (substitutions and
/// comments) and the adjustments (`badj`, `padj`, `ladj`, `radj`, `presadj`) that precede it.
/// Those live in side tables of the game, so an event is plain data and cheap to copy.
package struct EventRecord: Sendable {
    package var line: Int32
    package var inning: Int32
    package var battingSide: Side
    package var batter: PlayerID
    /// nil when the count is unknown (`??`).
    package var count: PitchCount?
    package var pitches: ByteRange
    package var text: ByteRange
    /// `NP`: a placeholder for substitutions, not a play.
    package var isNoPlay: Bool
    /// Where this event's substitutions start in `GameRecord.substitutions`, and how many.
    package var substitutionStart: UInt32 = 0
    package var substitutionCount: UInt16 = 0
    /// Where this event's comments start in `GameRecord.eventComments`, and how many.
    package var commentStart: UInt32 = 0
    package var commentCount: UInt16 = 0
    /// Index into `GameRecord.adjustments`, -1 when none.
    package var adjustmentIndex: Int32 = -1
}

/// Adjustments that apply from one play record on.
package struct EventAdjustments: Sendable, Hashable {
    /// `badj`: the batter bats from this side (`L`, `R`), 0 when not adjusted.
    package var batterHand: UInt8 = 0
    /// `padj`: the pitcher throws with this hand, 0 when not adjusted.
    package var pitcherHand: UInt8 = 0
    package var pitcherHandPlayer = PlayerID.none
    /// `ladj`: the batting slot that bats next (batting out of order), 0 when not adjusted.
    package var nextBattingSlot: UInt8 = 0
    /// `radj`: a runner placed on base (the automatic runner of extra innings).
    package var placedRunner = PlayerID.none
    package var placedRunnerBase: UInt8 = 0
    /// Line number and text of the `radj` record, for errors.
    package var placedRunnerLine: Int32 = 0
    package var placedRunnerRecord = ByteRange.empty
    /// `presadj`: the pitcher charged with the runner on a base.
    package var responsiblePitcher = PlayerID.none
    package var responsiblePitcherBase: UInt8 = 0

    package var isEmpty: Bool {
        batterHand == 0 && pitcherHand == 0 && nextBattingSlot == 0 && placedRunner.isNone
            && responsiblePitcher.isNone
    }
}

extension GameRecord {
    /// What the game's records say of its end: its scheduled length and the pitchers of record
    /// (`info,wp`, `info,lp`, `info,save`).
    package var result: GameResult {
        func pitcher(_ key: String) -> PlayerID? {
            info(key).flatMap { $0.isEmpty ? nil : PlayerID($0) }
        }
        return GameResult(
            scheduledInnings: scheduledInnings, winningPitcher: pitcher("wp"), losingPitcher: pitcher("lp"),
            savePitcher: pitcher("save"))
    }
}
