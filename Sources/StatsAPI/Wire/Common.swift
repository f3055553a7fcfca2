import Baseball
import Foundation

// The Stats API's documents, as far as the service reads them, one file per document. Fields the
// service does not use are not modelled; fields that real responses sometimes leave out are
// optional; enumerations keep values they do not know (`rawValue`) rather than failing the whole
// feed.

/// `{"id": 123, "fullName": "..."}`.
package struct Person: Codable, Sendable, Hashable {
    package var id: Int
    package var fullName: String?

    package init(id: Int, fullName: String? = nil) {
        self.id = id
        self.fullName = fullName
    }
}

package struct NamedCode: Codable, Sendable, Hashable {
    package var code: String?
    package var description: String?

    package init(code: String? = nil, description: String? = nil) {
        self.code = code
        self.description = description
    }
}

package struct Team: Codable, Sendable, Hashable {
    package var id: Int
    package var name: String?
    package var abbreviation: String?
    package var teamName: String?
    package var locationName: String?

    package init(
        id: Int, name: String? = nil, abbreviation: String? = nil, teamName: String? = nil, locationName: String? = nil
    ) {
        self.id = id
        self.name = name
        self.abbreviation = abbreviation
        self.teamName = teamName
        self.locationName = locationName
    }
}

/// `gameData.status` / a schedule game's `status`.
package struct FeedStatus: Codable, Sendable, Hashable {
    package var abstractGameState: String?
    package var codedGameState: String
    package var detailedState: String?
    package var statusCode: String?
    package var reason: String?
    package var startTimeTBD: Bool?

    /// What the service does with a game in this state.
    package enum Phase: Sendable, Hashable {
        /// S scheduled, P pre-game, PW warm-up: not live yet.
        case notStarted
        /// I in progress, M/N under review: poll it.
        case live
        /// F final, O game over, FR/OR completed early, FT final tied.
        case final
        /// D postponed.
        case postponed
        /// C cancelled.
        case cancelled
        /// U/T suspended: resumes another day.
        case suspended
        /// A code the service does not know: polled as if live, and logged.
        case unknown(String)
    }

    package var phase: Phase {
        let code = codedGameState
        switch code {
        case "S", "P": return .notStarted
        case "I", "M", "N": return .live
        case "F", "O": return .final
        case "D": return .postponed
        case "C": return .cancelled
        case "U", "T": return .suspended
        default:
            // Two-letter codes: the first letter is the state, the second the reason.
            if code == "PW" || code.hasPrefix("P") { return .notStarted }
            if code.hasPrefix("F") || code.hasPrefix("O") { return .final }
            if code.hasPrefix("I") || code.hasPrefix("M") || code.hasPrefix("N") { return .live }
            if code.hasPrefix("D") { return .postponed }
            if code.hasPrefix("C") { return .cancelled }
            if code.hasPrefix("U") || code.hasPrefix("T") { return .suspended }
            return .unknown(code)
        }
    }

    package init(
        abstractGameState: String? = nil, codedGameState: String, detailedState: String? = nil,
        statusCode: String? = nil, reason: String? = nil, startTimeTBD: Bool? = nil
    ) {
        self.abstractGameState = abstractGameState
        self.codedGameState = codedGameState
        self.detailedState = detailedState
        self.statusCode = statusCode
        self.reason = reason
        self.startTimeTBD = startTimeTBD
    }
}

package struct FieldPosition: Codable, Sendable, Hashable {
    package var code: String?
    package var name: String?
    package var abbreviation: String?

    package init(code: String? = nil, name: String? = nil, abbreviation: String? = nil) {
        self.code = code
        self.name = name
        self.abbreviation = abbreviation
    }
}

extension FeedStatus {
    /// The status in the engine's words: the phase, the feed's detail ("Rain", "Tied") when it
    /// says more, and a postponed or suspended game's new date (from the schedule) when known.
    package func gameStatus(resumesOn: String? = nil) -> GameStatus {
        let detail = reason ?? (detailedState.map { $0 == abstractGameState ? nil : $0 } ?? nil)
        let phase: GameStatus.Phase
        switch self.phase {
        case .notStarted: phase = codedGameState == "PW" ? .warmup : .scheduled
        case .live:
            // "I" in progress; a delay keeps the game in progress ("Delayed: Rain").
            phase = (detailedState ?? "").hasPrefix("Delayed") ? .delayed : .live
        case .final: phase = .final
        case .postponed: phase = .postponed
        case .cancelled: phase = .cancelled
        case .suspended: phase = .suspended
        case .unknown: phase = .live
        }
        return GameStatus(phase, detail: detail, resumesOn: resumesOn)
    }

    /// See ``gameStatus(resumesOn:)``.
    package var gameStatus: GameStatus { gameStatus() }
}
