/// The plate appearance in progress between plays: who is up, the count, the last pitch. A source
/// says it as pitches are thrown (a replay from Retrosheet's pitch sequences, the Stats API from
/// its live feed's current play); it is not a game update, so the game's updates stay the plays
/// and substitutions alone.
package struct AtBat: Sendable, Hashable, Codable {
    package var batter: PlayerID
    package var balls: Int
    package var strikes: Int
    /// The last pitch in words: `Ball`, `Called strike`, `Foul` (Retrosheet), or the Stats API's
    /// pitch type (`Four-Seam Fastball`); nil when not known.
    package var lastPitch: String?
    /// Its speed in mph, where the source gives it.
    package var lastPitchSpeed: Double?
    /// Pitches thrown in the plate appearance so far (its pitcher's count is his line's and these).
    package var pitches: Int
    /// The game's updates said before it: a count said before a play the follower has since
    /// applied is out of date and ignored.
    package var afterUpdates: Int
    /// The plate appearance's pitches where the source says where each crossed the plate (the
    /// Stats API's pitch tracking), in order; empty where it does not.
    package var marks: [PitchMark] = []

    package init(
        batter: PlayerID, balls: Int, strikes: Int, lastPitch: String? = nil, lastPitchSpeed: Double? = nil,
        pitches: Int = 0, afterUpdates: Int, marks: [PitchMark] = []
    ) {
        self.marks = marks
        self.batter = batter
        self.balls = balls
        self.strikes = strikes
        self.lastPitch = lastPitch
        self.lastPitchSpeed = lastPitchSpeed
        self.pitches = pitches
        self.afterUpdates = afterUpdates
    }

    enum CodingKeys: String, CodingKey {
        case batter, balls, strikes, lastPitch, lastPitchSpeed, pitches, afterUpdates, marks
    }

    /// Reads what was written; an item logged before the pitches were counted has none.
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        batter = try container.decode(PlayerID.self, forKey: .batter)
        balls = try container.decode(Int.self, forKey: .balls)
        strikes = try container.decode(Int.self, forKey: .strikes)
        lastPitch = try container.decodeIfPresent(String.self, forKey: .lastPitch)
        lastPitchSpeed = try container.decodeIfPresent(Double.self, forKey: .lastPitchSpeed)
        pitches = try container.decodeIfPresent(Int.self, forKey: .pitches) ?? 0
        afterUpdates = try container.decode(Int.self, forKey: .afterUpdates)
        marks = try container.decodeIfPresent([PitchMark].self, forKey: .marks) ?? []
    }
}

/// A pitch where it crossed the front of the plate, as pitch tracking measures it: what a strike
/// zone plot shows.
package struct PitchMark: Sendable, Hashable, Codable {
    /// Its number in the plate appearance, from 1.
    package var number: Int
    /// The call's code (`B` ball, `C` called strike, `S` swinging strike, `F` foul, `X` in play …)
    /// and words (`Called Strike`).
    package var code: String
    package var call: String
    /// The pitch type (`Four-Seam Fastball`) and speed out of the hand (mph), where given.
    package var type: String?
    package var speed: Double?
    /// Feet from the middle of the plate (the catcher's view, positive to his right) and above the
    /// ground.
    package var x: Double
    package var z: Double
    /// The batter's strike zone, top and bottom, in feet.
    package var top: Double
    package var bottom: Double

    package init(
        number: Int, code: String, call: String, type: String? = nil, speed: Double? = nil, x: Double, z: Double,
        top: Double, bottom: Double
    ) {
        self.number = number
        self.code = code
        self.call = call
        self.type = type
        self.speed = speed
        self.x = x
        self.z = z
        self.top = top
        self.bottom = bottom
    }
}

/// Retrosheet's pitch sequences (`BCFX`, `*B1FBCC`, `.>S.>B`) pitch by pitch, with the count after
/// each pitch: balls `B` `I` `P` `V`; strikes `A` `C` `K` `M` `O` `Q` `S` `T` and `L` (a foul bunt,
/// a strike even with two); fouls `F` `R` a strike below two; `H` `X` `Y` end the plate
/// appearance with the count as it was; `U` an unknown pitch, the count unchanged. Pickoff throws
/// (`1`-`3`, `+`), `*`, `.`, `>` and `N` (no pitch) are not pitches.
package enum PitchSequence {
    package struct Pitch: Sendable, Hashable {
        /// The character in the sequence.
        package var code: UInt8
        /// The count after the pitch (balls at most 4, strikes at most 3).
        package var balls: Int
        package var strikes: Int
    }

    package static func pitches(_ sequence: some Sequence<UInt8>) -> [Pitch] {
        var balls = 0
        var strikes = 0
        var pitches: [Pitch] = []
        for code in sequence {
            switch code {
            case UInt8(ascii: "B"), UInt8(ascii: "I"), UInt8(ascii: "P"), UInt8(ascii: "V"):
                balls = min(4, balls + 1)
            case UInt8(ascii: "A"), UInt8(ascii: "C"), UInt8(ascii: "K"), UInt8(ascii: "M"), UInt8(ascii: "O"),
                UInt8(ascii: "Q"), UInt8(ascii: "S"), UInt8(ascii: "T"), UInt8(ascii: "L"):
                strikes = min(3, strikes + 1)
            case UInt8(ascii: "F"), UInt8(ascii: "R"):
                if strikes < 2 { strikes += 1 }
            case UInt8(ascii: "H"), UInt8(ascii: "X"), UInt8(ascii: "Y"), UInt8(ascii: "U"):
                break
            default:
                continue
            }
            pitches.append(Pitch(code: code, balls: balls, strikes: strikes))
        }
        return pitches
    }

    /// A pitch in words, as a scoreboard says the last one.
    package static func words(_ code: UInt8) -> String {
        switch code {
        case UInt8(ascii: "B"): "Ball"
        case UInt8(ascii: "I"): "Intentional ball"
        case UInt8(ascii: "P"): "Pitchout"
        case UInt8(ascii: "V"): "Automatic ball"
        case UInt8(ascii: "A"): "Automatic strike"
        case UInt8(ascii: "C"): "Called strike"
        case UInt8(ascii: "S"), UInt8(ascii: "Q"): "Swinging strike"
        case UInt8(ascii: "K"): "Strike"
        case UInt8(ascii: "M"): "Missed bunt"
        case UInt8(ascii: "T"), UInt8(ascii: "O"): "Foul tip"
        case UInt8(ascii: "F"), UInt8(ascii: "R"): "Foul"
        case UInt8(ascii: "L"): "Foul bunt"
        case UInt8(ascii: "H"): "Hit by pitch"
        case UInt8(ascii: "X"), UInt8(ascii: "Y"): "In play"
        default: "Pitch"
        }
    }
}
