/// A play in words, as a play-by-play reads it: "Tim Anderson singles to left field. Yoan Moncada
/// to third." Every error is named with its fielder (and where it let a runner go), every run
/// scored and every out on the bases said, as Gameday does. Built from the play as the engine
/// applied it (every source alike), never from a source's codes. Pure.
package enum PlayDescription {
    /// `result` in words, players named by `name`.
    package static func text(_ result: borrowing PlayResult, name: (PlayerID) -> String) -> String {
        let play = result.play
        let batter = name(result.batter)
        func runner(_ base: Int) -> String { name(result.runnersBefore[base]) }
        var sentences: [String] = []
        var described = BaseFlags()
        // The errors charged on the play, each named once (where it let someone move, or last).
        var unnamed = (0..<min(play.errors.count, 4)).map { play.errors[$0] }
        func naming(_ fielder: UInt8) {
            if let index = unnamed.firstIndex(of: fielder) { unnamed.remove(at: index) }
        }
        // Why a batter or runner moved on, when not by the play itself: an error, a wild pitch.
        func because(_ base: Int) -> String {
            let error = play.advanceErrors[base]
            if !error.isNone {
                naming(error.fielder)
                return " on " + errorPhrase(error)
            }
            guard !inPlay(play.eventType) else { return "" }
            if play.modifiers.contains(.wildPitch) && play.eventType != .wildPitch { return " on the wild pitch" }
            if play.modifiers.contains(.passedBall) && play.eventType != .passedBall { return " on the passed ball" }
            return ""
        }

        let direction = where_(play.fieldedBy)
        switch play.eventType {
        case .single, .double, .triple, .homeRun, .walk, .intentionalWalk, .hitByPitch, .fieldersChoice:
            var text = batterPhrase(batter, play.eventType, fielder: play.fieldedBy)
            if play.eventType == .homeRun {
                let runs = play.runs
                text += runs == 4 ? " (grand slam)" : runs > 1 ? " (\(runs) runs)" : ""
            }
            if play.eventType.isHit && play.putOuts.contains(.batter) {
                text +=
                    " and is out" + (play.outAt.batter > 0 ? " at \(baseWord(play.outAt.batter))" : "")
                    + " trying to advance"
            }
            sentences.append(text)
            described.insert(.batter)
        case .error, .interference:
            let fielder = play.errors.isEmpty ? nil : play.errors[0]
            if let fielder { naming(fielder) }
            // The batter's own error credit (when it is this error), or the play's throwing flag
            // when no runner's error has it.
            let own = play.advanceErrors.batter
            let throwing =
                (own.fielder == fielder && own.throwing)
                || (own.isNone && play.modifiers.contains(.throwingError)
                    && !(1...3).contains { play.advanceErrors[$0].throwing })
            sentences.append(batterPhrase(batter, play.eventType, fielder: fielder, throwing: throwing))
            described.insert(.batter)
        case .strikeout:
            var text = batterPhrase(batter, .strikeout, fielder: nil)
            if !play.putOuts.contains(.batter) && play.advances.batter != .none {
                var reason = because(0)
                // `K+E2`: the error the play is charged with let him reach.
                if reason.isEmpty, let fielder = unnamed.first {
                    naming(fielder)
                    reason =
                        " on "
                        + errorPhrase(AdvanceError(fielder: fielder, throwing: play.modifiers.contains(.throwingError)))
                }
                text += " but reaches" + (reason.isEmpty ? " on the dropped third strike" : reason)
            }
            sentences.append(text)
            described.insert(.batter)
        case .genericOut:
            if !play.putOuts.contains(.batter) && !play.advanceErrors.batter.isNone {
                sentences.append("\(batter) reaches" + because(0))
            } else {
                sentences.append(out(batter, play, direction: direction))
            }
            described.insert(.batter)
        case .stolenBase, .caughtStealing, .pickoff, .defensiveIndifference, .pickoffError:
            for base in 1...3 where !result.runnersBefore[base].isNone {
                let next = baseWord(UInt8(base + 1))
                let from = baseWord(UInt8(base))
                // Safe on an error in the attempt: named with it.
                let safe = { () -> String in
                    let reason = because(base)
                    return reason.isEmpty ? ", safe on the error" : ", safe" + reason
                }
                // Where he went on from there: out trying to take one more, or on to score.
                let then = { () -> String in
                    if play.putOuts[base] {
                        let at = play.outAt[base]
                        return " and is out" + (at > 0 ? " at \(baseWord(at))" : "") + " trying to advance"
                    }
                    let destination = play.advances[base]
                    if destination.scored { return " and scores" + because(base) }
                    if let to = destination.base, to > base + 1 {
                        return " and takes \(baseWord(UInt8(to)))" + because(base)
                    }
                    return ""
                }
                // Safe on an error in the attempt, and where that took him.
                let safeThen = { (safeAt: Int) -> String in
                    let destination = play.advances[base]
                    let text = safe()
                    if destination.scored { return text + ", and scores" }
                    if let to = destination.base, to > safeAt { return text + ", and takes \(baseWord(UInt8(to)))" }
                    return text
                }
                if play.stolenBases[base] {
                    sentences.append("\(runner(base)) steals \(next)" + then())
                    described.insert(.at(base))
                    continue
                } else if play.caughtStealing[base] {
                    sentences.append(
                        "\(runner(base)) is caught stealing \(next)" + (play.putOuts[base] ? "" : safeThen(base + 1)))
                    described.insert(.at(base))
                    continue
                } else if play.pickedOff[base] {
                    sentences.append(
                        "\(runner(base)) is picked off \(from)" + (play.putOuts[base] ? "" : safeThen(base)))
                    described.insert(.at(base))
                    continue
                } else if play.eventType == .defensiveIndifference && play.advances[base] != .base(base) {
                    sentences.append("\(runner(base)) takes \(next) on defensive indifference")
                } else {
                    continue
                }
                if play.advances[base] == .base(base + 1) || (base == 3 && play.advances[base].scored)
                    || play.putOuts[base] || play.advances[base] == .base(base)
                {
                    described.insert(.at(base))
                }
            }
            if sentences.isEmpty { sentences.append("Runners move") }
        case .wildPitch: sentences.append("Wild pitch by \(name(result.pitcher))")
        case .passedBall: sentences.append("Passed ball")
        case .balk: sentences.append("Balk by \(name(result.pitcher))")
        case .otherAdvance: sentences.append("Runners advance")
        case .foulError:
            let fielder = play.errors.isEmpty ? nil : play.errors[0]
            if let fielder { naming(fielder) }
            sentences.append("Error on a foul ball\(fielder.flatMap(position).map { " by the \($0)" } ?? "")")
        case .none, .unknown, .missingPlay: sentences.append("No play")
        }

        // The runners the main sentence did not account for, lead runner first.
        for base in [3, 2, 1] where !result.runnersBefore[base].isNone && !described[base] {
            let destination = play.advances[base]
            if play.putOuts[base] {
                let at = play.outAt[base]
                sentences.append("\(runner(base)) out" + (at > 0 ? " at \(baseWord(at))" : ""))
            } else if destination.scored {
                sentences.append("\(runner(base)) scores" + because(base))
            } else if let to = destination.base, to != base {
                sentences.append("\(runner(base)) to \(baseWord(UInt8(to)))" + because(base))
            }
        }
        if described.contains(.batter) || play.eventType.endsPlateAppearance {
            let reached = max(1, play.eventType.hitValue)
            // On an error play the batter's error is the one the play is named for.
            let reason = {
                [.error, .interference].contains(play.eventType)
                    && (play.advanceErrors.batter.isNone
                        || play.advanceErrors.batter.fielder == (play.errors.isEmpty ? 0 : play.errors[0]))
                    ? "" : because(0)
            }
            if play.advances.batter.scored && play.eventType != .homeRun {
                sentences.append("\(batter) scores" + reason())
            } else if let to = play.advances.batter.base, to > reached {
                sentences.append("\(batter) to \(baseWord(UInt8(to)))" + reason())
            }
        }
        // Errors no one's move was tied to.
        for fielder in unnamed {
            let throwing = play.modifiers.contains(.throwingError) && unnamed.count == 1
            sentences.append(
                (throwing ? "Throwing error" : "Error") + (position(fielder).map { " by the \($0)" } ?? ""))
        }
        return sentences.map { $0 + "." }.joined(separator: " ")
    }

    /// "an error by the shortstop", "a throwing error by the pitcher".
    static func errorPhrase(_ error: AdvanceError) -> String {
        (error.throwing ? "a throwing error" : "an error") + (position(error.fielder).map { " by the \($0)" } ?? "")
    }

    /// A ball put in play (a hit, an out or error on it, a fielder's choice): its runners moved
    /// on the ball, not on a pitch that got away.
    static func inPlay(_ type: EventType) -> Bool {
        type.isHit || type == .genericOut || type == .error || type == .fieldersChoice || type == .foulError
    }

    /// A base by number as a play-by-play says it: "first", "home".
    static func baseWord(_ base: UInt8) -> String {
        switch base {
        case 1: "first"
        case 2: "second"
        case 3: "third"
        default: "home"
        }
    }

    /// What the batter did, as a plate appearance ends: "Tim Anderson singles to left field",
    /// "Jose Abreu walks", "Yoan Moncada reaches on an error by the shortstop". `fielder` is who
    /// first played the ball (or, for an error, who made it).
    package static func batterPhrase(_ batter: String, _ type: EventType, fielder: UInt8?, throwing: Bool = false)
        -> String
    {
        let direction = fielder.flatMap(where_)
        let to = direction.map { " to \($0)" } ?? ""
        switch type {
        case .single: return "\(batter) singles\(to)"
        case .double: return "\(batter) doubles\(to)"
        case .triple: return "\(batter) triples\(to)"
        case .homeRun: return "\(batter) homers\(to)"
        case .strikeout: return "\(batter) strikes out"
        case .walk: return "\(batter) walks"
        case .intentionalWalk: return "\(batter) is intentionally walked"
        case .hitByPitch: return "\(batter) is hit by a pitch"
        case .interference:
            return fielder == nil || fielder == 2
                ? "\(batter) reaches on catcher's interference"
                : "\(batter) reaches on interference by the \(fielder.flatMap(position) ?? "defense")"
        case .error:
            return "\(batter) reaches on " + errorPhrase(AdvanceError(fielder: fielder ?? 0, throwing: throwing))
        case .fieldersChoice: return "\(batter) reaches on a fielder's choice\(to)"
        default: return "\(batter) is out\(to)"
        }
    }

    /// A bid's first hit or first baserunner in words, with its pitcher and situation: "Eric Sogard
    /// singles to center field off Kenta Maeda with nobody out in the top of the 9th".
    package static func bidPlay(_ mark: BidPlay, name: (PlayerID) -> String) -> String {
        batterPhrase(name(mark.batter), mark.eventType, fielder: mark.fielder)
            + " off \(name(mark.pitcher)) with "
            + Words.situation(outs: mark.outsInInning, inning: mark.inning, battingSide: mark.battingSide)
    }

    /// A player entering, in words: "Aaron Bummer pitches for the White Sox", "Nomar Mazara
    /// pinch-hits for the White Sox", "Leury Garcia takes over at shortstop".
    package static func entering(_ name: String, team: String, position: UInt8) -> String {
        switch position {
        case Position.pitcher: "\(name) pitches for the \(team)."
        case Position.pinchHitter: "\(name) pinch-hits for the \(team)."
        case Position.pinchRunner: "\(name) pinch-runs for the \(team)."
        case Position.designatedHitter: "\(name) is the \(team)' designated hitter."
        default: "\(name) takes over at \(self.position(position) ?? "a new position")."
        }
    }

    /// An out by the batter: the kind of batted ball, a double or triple play, a sacrifice.
    private static func out(_ batter: String, _ play: Play, direction: String?) -> String {
        let to = direction.map { " to \($0)" } ?? ""
        if play.modifiers.contains(.sacrificeFly) { return "\(batter) hits a sacrifice fly\(to)" }
        if play.modifiers.contains(.sacrificeHit) { return "\(batter) lays down a sacrifice bunt\(to)" }
        if play.modifiers.contains(.triplePlay) { return "\(batter) hits into a triple play" }
        if play.modifiers.contains(.doublePlay) || play.modifiers.contains(.groundedIntoDoublePlay) {
            return play.battedBall == .groundBall || play.modifiers.contains(.groundedIntoDoublePlay)
                ? "\(batter) grounds into a double play\(to)" : "\(batter) hits into a double play\(to)"
        }
        if !play.putOuts.contains(.batter) {
            return "\(batter) reaches\(to)"
        }
        switch play.battedBall {
        case .groundBall: return "\(batter) grounds out\(to)"
        case .flyBall: return "\(batter) flies out\(to)"
        case .lineDrive: return "\(batter) lines out\(to)"
        case .popUp: return "\(batter) pops out\(to)"
        case nil:
            return play.modifiers.contains(.bunt) ? "\(batter) is out on a bunt\(to)" : "\(batter) is out\(to)"
        }
    }

    /// Where a ball went by the fielder who first played it: "left field", "shortstop".
    static func where_(_ fielder: UInt8) -> String? {
        switch fielder {
        case 7: "left field"
        case 8: "center field"
        case 9: "right field"
        case 1...6: position(fielder)
        default: nil
        }
    }

    /// A fielder by position number: "shortstop", "center fielder".
    package static func position(_ fielder: UInt8) -> String? {
        switch fielder {
        case 1: "pitcher"
        case 2: "catcher"
        case 3: "first baseman"
        case 4: "second baseman"
        case 5: "third baseman"
        case 6: "shortstop"
        case 7: "left fielder"
        case 8: "center fielder"
        case 9: "right fielder"
        default: nil
        }
    }

    /// A position as a scorecard writes it: `SS`, `CF`, `DH`, `PH` (see `Position`).
    package static func positionAbbreviation(_ position: UInt8) -> String {
        switch position {
        case 1: "P"
        case 2: "C"
        case 3: "1B"
        case 4: "2B"
        case 5: "3B"
        case 6: "SS"
        case 7: "LF"
        case 8: "CF"
        case 9: "RF"
        case 10: "DH"
        case 11: "PH"
        case 12: "PR"
        default: "?"
        }
    }
}
