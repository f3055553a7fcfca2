/// A play in words, as a play-by-play reads it: "Tim Anderson singles to left field. Yoan Moncada
/// to third." Built from the play as the engine applied it (every source alike), never from a
/// source's codes. Pure.
package enum PlayDescription {
    /// `result` in words, players named by `name`.
    package static func text(_ result: borrowing PlayResult, name: (PlayerID) -> String) -> String {
        let play = result.play
        let batter = name(result.batter)
        func runner(_ base: Int) -> String { name(result.runnersBefore[base]) }
        var sentences: [String] = []
        var described = BaseFlags()

        let direction = where_(play.fieldedBy)
        switch play.eventType {
        case .single, .double, .triple, .homeRun, .strikeout, .walk, .intentionalWalk, .hitByPitch, .interference,
            .error, .fieldersChoice:
            var text = batterPhrase(
                batter, play.eventType,
                fielder: play.eventType == .error ? (play.errors.isEmpty ? nil : play.errors[0]) : play.fieldedBy)
            if play.eventType == .homeRun {
                let runs = play.runs
                text += runs == 4 ? " (grand slam)" : runs > 1 ? " (\(runs) runs)" : ""
            }
            if play.eventType == .strikeout && !play.putOuts.contains(.batter) && play.advances.batter != .none {
                text += " but reaches on the dropped third strike"
            }
            if play.eventType.isHit && play.putOuts.contains(.batter) { text += " and is out trying to advance" }
            sentences.append(text)
            described.insert(.batter)
        case .genericOut:
            sentences.append(out(batter, play, direction: direction))
            described.insert(.batter)
        case .stolenBase, .caughtStealing, .pickoff, .defensiveIndifference, .pickoffError:
            for base in 1...3 where !result.runnersBefore[base].isNone {
                let next = ["", "second", "third", "home"][base]
                let from = ["", "first", "second", "third"][base]
                if play.stolenBases[base] {
                    sentences.append("\(runner(base)) steals \(next)")
                } else if play.caughtStealing[base] {
                    sentences.append(
                        "\(runner(base)) is caught stealing \(next)"
                            + (play.putOuts[base] ? "" : ", safe on the error"))
                } else if play.pickedOff[base] {
                    sentences.append(
                        "\(runner(base)) is picked off \(from)" + (play.putOuts[base] ? "" : ", safe on the error"))
                } else if play.eventType == .defensiveIndifference && play.advances[base] != .base(base) {
                    sentences.append("\(runner(base)) takes \(next) on defensive indifference")
                } else {
                    continue
                }
                if play.advances[base] == .base(base + 1) || (base == 3 && play.advances[base].scored)
                    || play.putOuts[base]
                {
                    described.insert(.at(base))
                }
            }
            if sentences.isEmpty { sentences.append("Runners move") }
        case .wildPitch: sentences.append("Wild pitch")
        case .passedBall: sentences.append("Passed ball")
        case .balk: sentences.append("Balk")
        case .otherAdvance: sentences.append("Runners advance")
        case .foulError:
            let fielder = play.errors.isEmpty ? nil : position(play.errors[0])
            sentences.append("Error on a foul ball\(fielder.map { " by the \($0)" } ?? "")")
        case .none, .unknown, .missingPlay: sentences.append("No play")
        }

        // The runners the main sentence did not account for, lead runner first.
        for base in [3, 2, 1] where !result.runnersBefore[base].isNone && !described[base] {
            let destination = play.advances[base]
            if play.putOuts[base] {
                sentences.append("\(runner(base)) out")
            } else if destination.scored {
                sentences.append("\(runner(base)) scores")
            } else if let to = destination.base, to != base {
                sentences.append("\(runner(base)) to \(["", "first", "second", "third"][to])")
            }
        }
        if described.contains(.batter) || play.eventType.endsPlateAppearance {
            if play.advances.batter.scored && play.eventType != .homeRun {
                sentences.append("\(batter) scores")
            } else if let to = play.advances.batter.base, to > max(1, play.eventType.hitValue) {
                sentences.append("\(batter) to \(["", "first", "second", "third"][to])")
            }
        }
        return sentences.map { $0 + "." }.joined(separator: " ")
    }

    /// What the batter did, as a plate appearance ends: "Tim Anderson singles to left field",
    /// "Jose Abreu walks", "Yoan Moncada reaches on an error by the shortstop". `fielder` is who
    /// first played the ball (or, for an error, who made it).
    package static func batterPhrase(_ batter: String, _ type: EventType, fielder: UInt8?) -> String {
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
        case .interference: return "\(batter) reaches on catcher's interference"
        case .error: return "\(batter) reaches on an error\(fielder.flatMap(position).map { " by the \($0)" } ?? "")"
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
