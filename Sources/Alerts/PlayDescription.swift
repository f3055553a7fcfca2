import Baseball

/// A play in words, as a play-by-play reads it: "Tim Anderson singles to left field. Yoan Moncada
/// to third." Built from the play as the engine applied it (every source alike), never from a
/// source's codes. Pure.
package enum PlayDescription {
    /// `result` in words, players named through `info`.
    package static func text(_ result: borrowing PlayResult, info: GameInfo) -> String {
        let play = result.play
        let batter = info.name(of: result.batter)
        func runner(_ base: Int) -> String { info.name(of: result.runnersBefore[base]) }
        var sentences: [String] = []
        var described = BaseFlags()

        let direction = where_(play.fieldedBy)
        switch play.eventType {
        case .single, .double, .triple, .homeRun:
            let verb = ["singles", "doubles", "triples", "homers"][play.eventType.hitValue - 1]
            var text = "\(batter) \(verb)\(direction.map { " to \($0)" } ?? "")"
            if play.eventType == .homeRun {
                let runs = play.runs
                text += runs == 4 ? " (grand slam)" : runs > 1 ? " (\(runs) runs)" : ""
            }
            if play.putOuts.contains(.batter) { text += " and is out trying to advance" }
            sentences.append(text)
            described.insert(.batter)
        case .strikeout:
            let reached = !play.putOuts.contains(.batter) && play.advances.batter != .none
            sentences.append("\(batter) strikes out" + (reached ? " but reaches on the dropped third strike" : ""))
            described.insert(.batter)
        case .walk: sentences.append("\(batter) walks"); described.insert(.batter)
        case .intentionalWalk: sentences.append("\(batter) is intentionally walked"); described.insert(.batter)
        case .hitByPitch: sentences.append("\(batter) is hit by a pitch"); described.insert(.batter)
        case .interference: sentences.append("\(batter) reaches on catcher's interference"); described.insert(.batter)
        case .error:
            let fielder = play.errors.isEmpty ? nil : position(play.errors[0])
            sentences.append("\(batter) reaches on an error\(fielder.map { " by the \($0)" } ?? "")")
            described.insert(.batter)
        case .fieldersChoice:
            sentences.append("\(batter) reaches on a fielder's choice\(direction.map { " to \($0)" } ?? "")")
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
    private static func where_(_ fielder: UInt8) -> String? {
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
}

/// One line of a game's play-by-play: a play or a player entering, in words, with the situation
/// after it.
package struct PlayByPlayEntry: Sendable, Hashable, Codable {
    /// The play's number in the game (substitutions carry the number of the play before them).
    package var number: Int
    package var inning: Int
    /// top or bottom.
    package var half: String
    package var text: String
    /// Outs in the half-inning after it.
    package var outs: Int
    package var awayScore: Int
    package var homeScore: Int
    /// Whether runs scored on it.
    package var scoring: Bool
}

extension GameFollower {
    /// The game's play-by-play so far, in order: the updates applied followed again from the
    /// lineups (the same engine; a game's updates take well under a millisecond).
    package func playByPlay() -> [PlayByPlayEntry] {
        guard engine != nil else { return [] }
        var engine = GameEngine(starters: starters, homeBatsFirst: homeBatsFirst, followsBids: false)
        var entries: [PlayByPlayEntry] = []
        for update in updates {
            guard let applied = try? engine.apply(update) else { break }
            let state = engine.state
            func entry(_ text: String, scoring: Bool = false) -> PlayByPlayEntry {
                PlayByPlayEntry(
                    number: state.playCount, inning: state.inning,
                    half: state.battingSide == .home ? "bottom" : "top", text: text, outs: state.outs,
                    awayScore: state.score.away, homeScore: state.score.home, scoring: scoring)
            }
            switch applied {
            case .play(let result):
                var line = entry(PlayDescription.text(result, info: info), scoring: result.runs > 0)
                // The half-inning of the play, even when its third out ended it.
                line.inning = result.inning
                line.half = result.battingSide == .home ? "bottom" : "top"
                if state.inning != result.inning || state.battingSide != result.battingSide {
                    line.outs = result.outsBefore + result.outs
                }
                entries.append(line)
            case .substitution(let appearance):
                let name = info.name(of: appearance.player)
                let team = info.team(appearance.side).nickname
                let text: String
                switch appearance.position {
                case Position.pitcher: text = "\(name) pitches for the \(team)."
                case Position.pinchHitter: text = "\(name) pinch-hits for the \(team)."
                case Position.pinchRunner: text = "\(name) pinch-runs for the \(team)."
                case Position.designatedHitter: text = "\(name) is the \(team)' designated hitter."
                default:
                    text = "\(name) takes over at \(PlayDescription.position(appearance.position) ?? "a new position")."
                }
                entries.append(entry(text))
            case .placeholder: break
            }
        }
        return entries
    }
}
