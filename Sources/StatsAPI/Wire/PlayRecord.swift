import Foundation

/// One plate appearance of `allPlays` (complete or in progress).
package struct PlayRecord: Codable, Sendable, Hashable {
    package var result: Result
    package var about: About
    package var count: Count
    package var matchup: Matchup
    package var runners: [Runner]
    /// Pitches and actions (substitutions among them). Each is read on its own: one that does
    /// not decode is kept as a `Malformed` entry naming what is wrong, not a failed feed.
    package var playEvents: [Lenient<PlayEvent>]
    package var atBatIndex: Int?
    /// A review of the play: a manager's challenge, or an ABS challenge of one of its pitches
    /// (`reviewType` "MJ").
    package var reviewDetails: ReviewDetails? = nil

    package struct Result: Codable, Sendable, Hashable {
        package var type: String?
        package var event: String?
        /// `single`, `double`, `triple`, `home_run` are the hits; absent until the play completes.
        package var eventType: String?
        package var description: String?
        package var rbi: Int?
        package var awayScore: Int?
        package var homeScore: Int?
        package var isOut: Bool?

        package init(
            type: String? = nil, event: String? = nil, eventType: String? = nil, description: String? = nil,
            rbi: Int? = nil, awayScore: Int? = nil, homeScore: Int? = nil, isOut: Bool? = nil
        ) {
            self.type = type
            self.event = event
            self.eventType = eventType
            self.description = description
            self.rbi = rbi
            self.awayScore = awayScore
            self.homeScore = homeScore
            self.isOut = isOut
        }
    }

    package struct About: Codable, Sendable, Hashable {
        package var atBatIndex: Int
        /// "top" or "bottom".
        package var halfInning: String
        package var isTopInning: Bool?
        package var inning: Int
        package var startTime: String?
        package var endTime: String?
        package var isComplete: Bool
        package var isScoringPlay: Bool?
        package var hasReview: Bool?
        package var hasOut: Bool?

        package init(
            atBatIndex: Int, halfInning: String, isTopInning: Bool? = nil, inning: Int, startTime: String? = nil,
            endTime: String? = nil, isComplete: Bool, isScoringPlay: Bool? = nil, hasReview: Bool? = nil,
            hasOut: Bool? = nil
        ) {
            self.atBatIndex = atBatIndex
            self.halfInning = halfInning
            self.isTopInning = isTopInning
            self.inning = inning
            self.startTime = startTime
            self.endTime = endTime
            self.isComplete = isComplete
            self.isScoringPlay = isScoringPlay
            self.hasReview = hasReview
            self.hasOut = hasOut
        }
    }

    package struct Count: Codable, Sendable, Hashable {
        package var balls: Int
        package var strikes: Int
        /// Outs in the half-inning **after** the play.
        package var outs: Int

        package init(balls: Int, strikes: Int, outs: Int) {
            self.balls = balls
            self.strikes = strikes
            self.outs = outs
        }
    }

    package struct Matchup: Codable, Sendable, Hashable {
        package var batter: Person
        /// Whoever finished the plate appearance.
        package var pitcher: Person
        package var batSide: NamedCode?
        package var pitchHand: NamedCode?

        package init(batter: Person, pitcher: Person, batSide: NamedCode? = nil, pitchHand: NamedCode? = nil) {
            self.batter = batter
            self.pitcher = pitcher
            self.batSide = batSide
            self.pitchHand = pitchHand
        }
    }

    package struct Runner: Codable, Sendable, Hashable {
        package var movement: Movement
        package var details: Details

        package struct Movement: Codable, Sendable, Hashable {
            /// "1B", "2B", "3B"; null for the batter.
            package var originBase: String?
            package var start: String?
            /// "1B", "2B", "3B", "score"; null when out.
            package var end: String?
            package var outBase: String?
            package var isOut: Bool?
            package var outNumber: Int?

            package init(
                originBase: String? = nil, start: String? = nil, end: String? = nil, outBase: String? = nil,
                isOut: Bool? = nil, outNumber: Int? = nil
            ) {
                self.originBase = originBase
                self.start = start
                self.end = end
                self.outBase = outBase
                self.isOut = isOut
                self.outNumber = outNumber
            }
        }

        package struct Details: Codable, Sendable, Hashable {
            package var event: String?
            package var eventType: String?
            package var movementReason: String?
            package var runner: Person
            package var responsiblePitcher: Person?
            package var isScoringEvent: Bool?
            package var rbi: Bool?
            package var earned: Bool?
            package var playIndex: Int?

            package init(
                event: String? = nil, eventType: String? = nil, movementReason: String? = nil, runner: Person,
                responsiblePitcher: Person? = nil, isScoringEvent: Bool? = nil, rbi: Bool? = nil, earned: Bool? = nil,
                playIndex: Int? = nil
            ) {
                self.event = event
                self.eventType = eventType
                self.movementReason = movementReason
                self.runner = runner
                self.responsiblePitcher = responsiblePitcher
                self.isScoringEvent = isScoringEvent
                self.rbi = rbi
                self.earned = earned
                self.playIndex = playIndex
            }
        }

        /// The fielders credited on the movement: `f_fielded_ball`, `f_assist`, `f_putout`,
        /// `f_fielding_error`, `f_throwing_error` ...
        package var credits: [Credit]?

        package struct Credit: Codable, Sendable, Hashable {
            package var position: FieldPosition?
            package var credit: String

            package init(position: FieldPosition? = nil, credit: String) {
                self.position = position
                self.credit = credit
            }
        }

        package init(movement: Movement, details: Details, credits: [Credit]? = nil) {
            self.movement = movement
            self.details = details
            self.credits = credits
        }
    }

    package init(
        result: Result, about: About, count: Count, matchup: Matchup, runners: [Runner],
        playEvents: [Lenient<PlayEvent>], atBatIndex: Int? = nil
    ) {
        self.result = result
        self.about = about
        self.count = count
        self.matchup = matchup
        self.runners = runners
        self.playEvents = playEvents
        self.atBatIndex = atBatIndex
    }
}

extension PlayRecord {
    /// The play events that did not decode, with their place: "playEvents[1]: missing ...".
    package var malformedEvents: [String] {
        playEvents.enumerated().compactMap { index, event in
            if case .malformed(let reason) = event { return "playEvents[\(index)]: \(reason)" }
            return nil
        }
    }
}

/// A pitch, pickoff or action within a plate appearance.
package struct PlayEvent: Codable, Sendable, Hashable {
    package var index: Int
    /// "pitch", "action", "pickoff", "no_pitch", "stepoff".
    package var type: String
    package var isPitch: Bool?
    package var isSubstitution: Bool?
    package var details: Details
    package var count: PlayRecord.Count?
    package var player: Person?
    package var position: FieldPosition?
    package var replacedPlayer: Person?
    package var battingOrder: String?
    package var pitchData: PitchData?
    /// When the event ended (ISO 8601, MLB's clock).
    package var endTime: String?
    /// A review of this pitch: an ABS challenge (`reviewType` "MJ").
    package var reviewDetails: ReviewDetails? = nil

    package struct Details: Codable, Sendable, Hashable {
        package var description: String?
        package var event: String?
        package var eventType: String?
        package var call: NamedCode?
        package var code: String?
        package var isInPlay: Bool?
        package var isStrike: Bool?
        package var isBall: Bool?
        package var isOut: Bool?
        /// The pitch type: a pitch's type always has a code.
        package var type: PitchType?
        /// Whether the pitch was reviewed (an ABS challenge among them).
        package var hasReview: Bool? = nil

        package init(
            description: String? = nil, event: String? = nil, eventType: String? = nil, call: NamedCode? = nil,
            code: String? = nil, isInPlay: Bool? = nil, isStrike: Bool? = nil, isBall: Bool? = nil, isOut: Bool? = nil,
            type: PitchType? = nil
        ) {
            self.description = description
            self.event = event
            self.eventType = eventType
            self.call = call
            self.code = code
            self.isInPlay = isInPlay
            self.isStrike = isStrike
            self.isBall = isBall
            self.isOut = isOut
            self.type = type
        }
    }

    package struct PitchType: Codable, Sendable, Hashable {
        package var code: String
        package var description: String?

        package init(code: String, description: String? = nil) {
            self.code = code
            self.description = description
        }
    }

    package struct PitchData: Codable, Sendable, Hashable {
        package var startSpeed: Double?
        package var endSpeed: Double?
        package var zone: Int?
        /// The batter's strike zone, top and bottom, in feet above the ground.
        package var strikeZoneTop: Double?
        package var strikeZoneBottom: Double?
        package var coordinates: Coordinates?

        /// Where the pitch crossed the front of the plate: `pX` feet from its middle (the catcher's
        /// view, positive to his right), `pZ` feet above the ground.
        package struct Coordinates: Codable, Sendable, Hashable {
            package var pX: Double?
            package var pZ: Double?

            package init(pX: Double? = nil, pZ: Double? = nil) {
                self.pX = pX
                self.pZ = pZ
            }
        }

        package init(
            startSpeed: Double? = nil, endSpeed: Double? = nil, zone: Int? = nil, strikeZoneTop: Double? = nil,
            strikeZoneBottom: Double? = nil, coordinates: Coordinates? = nil
        ) {
            self.startSpeed = startSpeed
            self.endSpeed = endSpeed
            self.zone = zone
            self.strikeZoneTop = strikeZoneTop
            self.strikeZoneBottom = strikeZoneBottom
            self.coordinates = coordinates
        }
    }

    package init(
        index: Int, type: String, isPitch: Bool? = nil, isSubstitution: Bool? = nil, details: Details,
        count: PlayRecord.Count? = nil, player: Person? = nil, position: FieldPosition? = nil,
        replacedPlayer: Person? = nil, battingOrder: String? = nil, pitchData: PitchData? = nil,
        endTime: String? = nil
    ) {
        self.endTime = endTime
        self.index = index
        self.type = type
        self.isPitch = isPitch
        self.isSubstitution = isSubstitution
        self.details = details
        self.count = count
        self.player = player
        self.position = position
        self.replacedPlayer = replacedPlayer
        self.battingOrder = battingOrder
        self.pitchData = pitchData
    }
}

/// A review: a replay review or manager's challenge of a play, or an automated ball-strike (ABS)
/// challenge of a pitch (`reviewType` "MJ").
package struct ReviewDetails: Codable, Sendable, Hashable {
    package var isOverturned: Bool?
    package var inProgress: Bool?
    package var reviewType: String?
    /// The team that challenged (MLB's team id).
    package var challengeTeamId: Int?
    /// Who challenged: the batter, the pitcher or the catcher.
    package var player: Person?

    package init(
        isOverturned: Bool? = nil, inProgress: Bool? = nil, reviewType: String? = nil, challengeTeamId: Int? = nil,
        player: Person? = nil
    ) {
        self.isOverturned = isOverturned
        self.inProgress = inProgress
        self.reviewType = reviewType
        self.challengeTeamId = challengeTeamId
        self.player = player
    }

    /// Whether this is an ABS challenge.
    package var isABS: Bool { reviewType == "MJ" }
}
