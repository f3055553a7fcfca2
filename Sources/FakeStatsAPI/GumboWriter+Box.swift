import Baseball
import Foundation
import StatsAPI

/// The game's people between plays, and what the feed shows of them: a substitution as MLB
/// writes it, the linescore and the boxscore's lineups and pitchers.
extension GumboWriter.Builder {
    mutating func addSubstitution(_ appearance: Appearance, at time: Date) {
        let side = appearance.side
        let slot = Int(appearance.battingSlot)
        let replaced: PlayerID =
            appearance.position == Position.pitcher
            ? state.fielder(1, of: side)
            : (slot > 0 ? state.lineup(side).entries[slot].player : .none)
        let alreadyIn =
            state.battingSlot(of: appearance.player, side: side) != nil
            || state.fielder(1, of: side) == appearance.player
        let type: String
        if appearance.position == Position.pitcher && !alreadyIn {
            type = "pitching_substitution"
        } else if appearance.position >= Position.pinchHitter {
            type = "offensive_substitution"
        } else if alreadyIn {
            type = "defensive_switch"
        } else {
            type = "defensive_substitution"
        }
        var order: String?
        if slot > 0 {
            if alreadyIn {
                order = players[side]![people.id(appearance.player)]?.battingOrder
            } else {
                let count = (subsInSlot[side]![slot] ?? 0) + 1
                subsInSlot[side]![slot] = count
                order = "\(slot)\(String(format: "%02d", count))"
            }
        }
        let id = people.id(appearance.player)
        let position = FieldPosition(code: "\(appearance.position)", name: nil, abbreviation: nil)
        var entry =
            players[side]![id]
            ?? Boxscore.Player(
                person: Person(id: id, fullName: game.info.players["\(appearance.player)"]), position: position,
                allPositions: [], battingOrder: order)
        entry.position = position
        entry.allPositions = (entry.allPositions ?? []) + [position]
        if entry.battingOrder == nil { entry.battingOrder = order }
        players[side]![id] = entry
        let event = PlayEvent(
            index: 0, type: "action", isPitch: false, isSubstitution: true,
            details: .init(description: nil, event: type, eventType: type),
            count: state.count.map { .init(balls: Int($0.balls), strikes: Int($0.strikes), outs: state.outs) },
            player: Person(id: id, fullName: nil), position: position,
            replacedPlayer: replaced.isNone ? nil : Person(id: people.id(replaced), fullName: nil),
            battingOrder: order, pitchData: nil, endTime: GumboWriter.isoMilliseconds(time))
        _ = try? state.apply(.substitution(appearance))
        if open {
            var event = event
            event.index = nextIndex
            appendEvent(event)
        } else {
            pending.append(event)
        }
    }

    func linescore(scheduledInnings: Int) -> Linescore {
        Linescore(
            currentInning: state.inning, inningState: nil,
            inningHalf: state.battingSide == .home ? "Bottom" : "Top", isTopInning: state.battingSide == .away,
            scheduledInnings: scheduledInnings,
            teams: .init(
                home: .init(runs: state.score.home, hits: state.pitching(.away).hits, errors: nil, leftOnBase: nil),
                away: .init(runs: state.score.away, hits: state.pitching(.home).hits, errors: nil, leftOnBase: nil)),
            outs: state.outs, balls: nil, strikes: nil)
    }

    func boxscore() -> Boxscore {
        func box(_ side: Side) -> Boxscore.TeamBox {
            var players: [String: Boxscore.Player] = [:]
            for (id, player) in self.players[side]! { players["ID\(id)"] = player }
            return Boxscore.TeamBox(
                team: GumboWriter.team(side == .away ? game.info.away : game.info.home),
                pitchers: state.pitching(side).pitchers.map(people.id), battingOrder: nil, players: players)
        }
        return Boxscore(teams: .init(away: box(.away), home: box(.home)))
    }
}
