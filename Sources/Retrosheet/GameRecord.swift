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
    /// Comments before the first play.
    package var comments: [ByteRange] = []
    /// `data` records (earned runs by pitcher): the fields after the record type.
    package var data: [[String]] = []

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

    /// The text of `range` (an event, a comment, a name).
    package func text(_ range: ByteRange) -> String {
        source.withUnsafeBufferPointer { $0.string(range) }
    }

    /// The starting lineups as the engine takes them.
    package var startingAppearances: [Appearance] { starters.map(\.appearance) }
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

/// A `play` record with the records that follow it up to the next play: substitutions and
/// comments, and the adjustments (`badj`, `padj`, `ladj`, `radj`, `presadj`) that precede it.
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
    package var substitutions: [LineupRecord] = []
    package var comments: [ByteRange] = []
    package var adjustments = EventAdjustments()
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
    /// `presadj`: the pitcher charged with the runner on a base.
    package var responsiblePitcher = PlayerID.none
    package var responsiblePitcherBase: UInt8 = 0

    package var isEmpty: Bool { self == EventAdjustments() }
}
