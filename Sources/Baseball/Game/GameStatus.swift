/// Where a game stands, in the same words whatever the source.
package struct GameStatus: Sendable, Hashable, Codable {
    package enum Phase: String, Sendable, Hashable, Codable, CaseIterable {
        /// Not started (probable pitchers may be known).
        case scheduled
        /// Warming up: lineups are out, no pitch yet.
        case warmup
        case live
        /// Stopped for now (rain, lights); it goes on.
        case delayed
        /// Stopped, to be finished another day (`resumesOn`).
        case suspended
        /// Not played today (`resumesOn`: the new date, when known).
        case postponed
        case cancelled
        case final
    }

    package var phase: Phase
    /// The source's words, when they say more than the phase ("Rain", "Tied").
    package var detail: String?
    /// A postponed game's new date, or the day a suspended game resumes (yyyy-mm-dd), when known.
    package var resumesOn: String?

    package init(_ phase: Phase, detail: String? = nil, resumesOn: String? = nil) {
        self.phase = phase
        self.detail = detail
        self.resumesOn = resumesOn
    }

    /// Whether plays are being made (or were, before a delay).
    package var isUnderway: Bool { phase == .live || phase == .delayed }
}

/// What only the end of a game says: how long it was scheduled to be and the pitchers of record.
package struct GameResult: Sendable, Hashable, Codable {
    /// 9, or 7 in the seven-inning doubleheader games of 2020-2021.
    package var scheduledInnings: Int
    package var winningPitcher: PlayerID?
    package var losingPitcher: PlayerID?
    package var savePitcher: PlayerID?

    package init(
        scheduledInnings: Int, winningPitcher: PlayerID? = nil, losingPitcher: PlayerID? = nil,
        savePitcher: PlayerID? = nil
    ) {
        self.scheduledInnings = scheduledInnings
        self.winningPitcher = winningPitcher
        self.losingPitcher = losingPitcher
        self.savePitcher = savePitcher
    }
}
