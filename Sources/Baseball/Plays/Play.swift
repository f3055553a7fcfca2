/// One play as scored, normalised so that every source (Retrosheet, the Stats API) can produce it
/// and the engine can apply it without knowing where it came from.
///
/// A play describes only what the scorer wrote. Runners it does not mention stay where they are;
/// the engine resolves that against the bases when it applies the play (see
/// `GameState.apply(_:)`).
package struct Play: Sendable, Hashable, Codable {
    package var eventType: EventType
    /// Where the batter (index 0) and each runner (by starting base) ended up. `.none` means out
    /// when `putOuts` has that index, otherwise not mentioned.
    package var advances: PerBase<Destination>
    /// Batter and runners put out on the play.
    package var putOuts: BaseFlags
    /// Runs batted in, by the runner who scored.
    package var rbi: PerBase<RBICredit>
    /// Runners (or the batter) retired on a force or a fielder's choice: the responsibility for the
    /// runner who remains passes back, per the official rule on relief pitchers.
    package var fieldersChoiceOuts: BaseFlags
    /// The fielding credit written for each batter or runner.
    package var credits: PerBase<FieldingCredit>
    /// Errors charged on the play, in order.
    package var errors: ErrorList
    package var modifiers: PlayModifiers
    package var battedBall: BattedBallType?
    /// The position (1-9) that first fielded the ball, 0 when none or unknown.
    package var fieldedBy: UInt8
    /// Runners (by starting base) credited with a stolen base, caught stealing or picked off.
    package var stolenBases: BaseFlags
    package var caughtStealing: BaseFlags
    package var pickedOff: BaseFlags
    /// The error that let each batter or runner (by starting base) reach or move on, as the scorer
    /// tied it to him (`2-H(E1/TH)`, `BX2(8E4)`, MLB's error credit on his movement); `.none` when
    /// he moved without one. An error the play is named for (`E6`) is `errors[0]`, not here.
    package var advanceErrors: PerBase<AdvanceError>
    /// The base each batter or runner put out on the play was put out at (1-3, 4 for home), by the
    /// base he started on; 0 when he was not put out, or the record does not say.
    package var outAt: PerBase<UInt8>

    package init(eventType: EventType) {
        self.eventType = eventType
        advances = PerBase(repeating: .none)
        putOuts = []
        rbi = PerBase(repeating: .none)
        fieldersChoiceOuts = []
        credits = PerBase(repeating: FieldingCredit())
        errors = ErrorList()
        modifiers = []
        battedBall = nil
        fieldedBy = 0
        stolenBases = []
        caughtStealing = []
        pickedOff = []
        advanceErrors = PerBase(repeating: .none)
        outAt = PerBase(repeating: 0)
    }

    /// Outs recorded on the play.

    package var outs: Int { putOuts.rawValue.nonzeroBitCount }

    /// Runs scored on the play.

    package var runs: Int {
        (advances.batter.scored ? 1 : 0) + (advances.first.scored ? 1 : 0) + (advances.second.scored ? 1 : 0)
            + (advances.third.scored ? 1 : 0)
    }

    /// Runs batted in.

    package var runsBattedIn: Int {
        (rbi.batter != .none ? 1 : 0) + (rbi.first != .none ? 1 : 0) + (rbi.second != .none ? 1 : 0)
            + (rbi.third != .none ? 1 : 0)
    }

    /// An official at bat: a plate appearance that is not a walk, hit batsman, interference,
    /// sacrifice hit or sacrifice fly.
    package var isAtBat: Bool {
        guard eventType.endsPlateAppearance else { return false }
        if modifiers.contains(.sacrificeHit) || modifiers.contains(.sacrificeFly) { return false }
        switch eventType {
        case .walk, .intentionalWalk, .hitByPitch, .interference: return false
        default: return true
        }
    }

    /// The batter reached base safely at some point of the play: a hit (even if he was then put out
    /// trying for more), a walk, a hit by pitch, interference, an error, a fielder's choice, or a
    /// strikeout on which he reached (dropped third strike, wild pitch).
    package var batterReachedBase: Bool {
        guard eventType.endsPlateAppearance else { return false }
        switch eventType {
        case .single, .double, .triple, .homeRun, .walk, .intentionalWalk, .hitByPitch, .interference, .error,
            .fieldersChoice:
            return true
        default:
            return !putOuts.contains(.batter) && advances.batter != .none
        }
    }
}

/// An error that let a batter or runner reach or move on: the fielder charged (1-9; 0 for none)
/// and whether it was on a throw.
package struct AdvanceError: Sendable, Hashable, Codable {
    package var fielder: UInt8
    package var throwing: Bool

    package init(fielder: UInt8, throwing: Bool = false) {
        self.fielder = fielder
        self.throwing = throwing
    }

    package static let none = AdvanceError(fielder: 0)
    package var isNone: Bool { fielder == 0 }
}

extension Play {
    private enum CodingKeys: String, CodingKey {
        case eventType, advances, putOuts, rbi, fieldersChoiceOuts, credits, errors, modifiers, battedBall
        case fieldedBy, stolenBases, caughtStealing, pickedOff, advanceErrors, outAt
    }

    /// Reads a play as written by this version or an earlier one (a shared game log written
    /// before `advanceErrors` and `outAt` reads without them).
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(eventType: try container.decode(EventType.self, forKey: .eventType))
        advances = try container.decode(PerBase<Destination>.self, forKey: .advances)
        putOuts = try container.decode(BaseFlags.self, forKey: .putOuts)
        rbi = try container.decode(PerBase<RBICredit>.self, forKey: .rbi)
        fieldersChoiceOuts = try container.decode(BaseFlags.self, forKey: .fieldersChoiceOuts)
        credits = try container.decode(PerBase<FieldingCredit>.self, forKey: .credits)
        errors = try container.decode(ErrorList.self, forKey: .errors)
        modifiers = try container.decode(PlayModifiers.self, forKey: .modifiers)
        battedBall = try container.decodeIfPresent(BattedBallType.self, forKey: .battedBall)
        fieldedBy = try container.decode(UInt8.self, forKey: .fieldedBy)
        stolenBases = try container.decode(BaseFlags.self, forKey: .stolenBases)
        caughtStealing = try container.decode(BaseFlags.self, forKey: .caughtStealing)
        pickedOff = try container.decode(BaseFlags.self, forKey: .pickedOff)
        advanceErrors =
            try container.decodeIfPresent(PerBase<AdvanceError>.self, forKey: .advanceErrors)
            ?? PerBase(repeating: .none)
        outAt = try container.decodeIfPresent(PerBase<UInt8>.self, forKey: .outAt) ?? PerBase(repeating: 0)
    }
}

/// Flags written after `/` in a play, and the like.
@usableFromInline
package struct PlayModifiers: OptionSet, Sendable, Hashable, Codable {
    @usableFromInline package let rawValue: UInt32
    @inlinable package init(rawValue: UInt32) { self.rawValue = rawValue }

    package static let sacrificeHit = PlayModifiers(rawValue: 1 << 0)
    package static let sacrificeFly = PlayModifiers(rawValue: 1 << 1)
    package static let doublePlay = PlayModifiers(rawValue: 1 << 2)
    package static let groundedIntoDoublePlay = PlayModifiers(rawValue: 1 << 3)
    package static let triplePlay = PlayModifiers(rawValue: 1 << 4)
    package static let wildPitch = PlayModifiers(rawValue: 1 << 5)
    package static let passedBall = PlayModifiers(rawValue: 1 << 6)
    package static let bunt = PlayModifiers(rawValue: 1 << 7)
    package static let foul = PlayModifiers(rawValue: 1 << 8)
    package static let force = PlayModifiers(rawValue: 1 << 9)
    package static let throwingError = PlayModifiers(rawValue: 1 << 10)
    package static let interference = PlayModifiers(rawValue: 1 << 11)
    package static let obstruction = PlayModifiers(rawValue: 1 << 12)
    package static let review = PlayModifiers(rawValue: 1 << 13)
    package static let infieldFly = PlayModifiers(rawValue: 1 << 14)
}

/// Trajectory of a batted ball.
@usableFromInline
package enum BattedBallType: UInt8, Sendable, Hashable, Codable {
    case groundBall = 0x47  // G
    case lineDrive = 0x4C  // L
    case flyBall = 0x46  // F
    case popUp = 0x50  // P
}
