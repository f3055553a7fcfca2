import Alerts
import Baseball
import Foundation
import Pipeline
import Retrosheet
import Scores
import TestSupport
import Testing

/// The state at the plate on the board, true at every moment of a replayed day (2020-08-25, the
/// shipped season, as the replay source says it: pitches between plays): before each play record
/// the batter shown is that record's batter (the one due up, not the one who just finished) and
/// the count is the one the record says the play came at; after a play within a plate appearance
/// (a steal, a wild pitch) the count is its pitch sequence's so far; between halves (`Mid`, `End`)
/// there is no batter, no pitcher, no runner, and the three due up begin with the next half's
/// first batter.
@Suite struct AtThePlateTests {
    /// The count after every pitch of a Retrosheet sequence, counted here apart from the product.
    static func count(_ sequence: [UInt8]) -> (balls: Int, strikes: Int) {
        var (balls, strikes) = (0, 0)
        for code in sequence.map({ Character(UnicodeScalar($0)) }) {
            if "BIPV".contains(code) { balls += 1 }
            if "ACKMOQSTL".contains(code) { strikes += 1 }
            if "FR".contains(code), strikes < 2 { strikes += 1 }
        }
        return (min(balls, 3), min(strikes, 2))
    }

    @Test func theBatterAndTheCountAreTrueAtEveryPlay() throws {
        let games = try ReplaySchedule.games(on: "2020-08-25", data: [TestData.path("retrosheet")])
        #expect(games.count == 16)
        let byID = Dictionary(uniqueKeysWithValues: games.map { ($0.record.id, $0) })
        var followers: [String: GameFollower] = [:]
        var applied: [String: Int] = [:]
        var (checked, counted, between, pitches, afterPlays, nextHalves) = (0, 0, 0, 0, 0, 0)
        // Whether `record` begins a half the follower has not begun (its pitches said before it
        // are the next half's).
        func wasNewHalf(_ record: PlayUpdate, _ follower: GameFollower) -> Bool {
            guard let state = follower.state else { return false }
            return state.outs < 3 && (record.inning, record.battingSide) != (state.inning, state.battingSide)
        }
        // Games whose last play was within a plate appearance, with its pitch sequence.
        var within: [String: [UInt8]] = [:]
        var wrong: [String] = []
        for entry in ReplayTimeline(games: games).entries {
            var follower = followers[entry.gameID] ?? GameFollower(gameID: entry.gameID)
            let game = try #require(byID[entry.gameID])
            let index = applied[entry.gameID] ?? 0
            if case .updates(let list) = entry.item, case .play(let record) = list.first, index > 0 {
                let board = LiveBoard.snapshot(follower, at: entry.time)
                let batter = game.info.name(of: record.batter)
                let place = "\(entry.gameID) before update \(index) (\(board.statusText))"
                let pitchesBefore = max(0, PitchSequence.pitches(game.pitchSequences[index]).count - 1)
                if board.statusText.hasPrefix("Mid") || board.statusText.hasPrefix("End") {
                    between += 1
                    // Between halves only until the next half's first pitch is said.
                    if pitchesBefore > 0, !wasNewHalf(record, follower) {
                        wrong.append("\(place): between halves after \(pitchesBefore) pitches of the next half")
                    }
                    if board.matchup != nil || board.bases != [false, false, false] {
                        wrong.append("\(place): a matchup or runners between halves")
                    }
                    if board.dueUp?.batters.first != batter || board.dueUp?.batters.count != 3 {
                        wrong.append("\(place): due up \(board.dueUp?.batters ?? []), the next batter is \(batter)")
                    }
                } else if let matchup = board.matchup {
                    checked += 1
                    if let state = follower.state, state.outs >= 3 { nextHalves += 1 }
                    if matchup.batter != batter { wrong.append("\(place): AB \(matchup.batter), not \(batter)") }
                    if board.dueUp != nil { wrong.append("\(place): due up during a half") }
                    // The count the record gives for its play, on the board just before it.
                    if let play = record.play, play.eventType.endsPlateAppearance, let count = record.count {
                        counted += 1
                        if (matchup.balls, matchup.strikes) != (Int(count.balls), Int(count.strikes)) {
                            wrong.append(
                                "\(place): count \(matchup.balls ?? -1)-\(matchup.strikes ?? -1), the record's \(count.balls)-\(count.strikes)"
                            )
                        }
                    }
                } else {
                    wrong.append("\(place): no matchup")
                }
            }
            if case .atBat = entry.item { pitches += 1 }
            _ = follower.follow(entry.item)
            // Right after a play within a plate appearance (a steal, a wild pitch), with the half
            // not over: the count of the record's pitch sequence.
            if let sequence = within.removeValue(forKey: entry.gameID) {
                let board = LiveBoard.snapshot(follower, at: entry.time)
                let expected = Self.count(sequence)
                if case .atBat = entry.item, let matchup = board.matchup {
                    afterPlays += 1
                    if (matchup.balls, matchup.strikes) != (expected.balls, expected.strikes) {
                        wrong.append(
                            "\(entry.gameID) after update \(index): count \(matchup.balls ?? -1)-\(matchup.strikes ?? -1), the sequence's \(expected)"
                        )
                    }
                } else {
                    wrong.append(
                        "\(entry.gameID) after update \(index): no count after a play within a plate appearance")
                }
            }
            if case .updates(let list) = entry.item {
                applied[entry.gameID] = index + list.count
                if case .play(let record) = list.first, let play = record.play, !play.eventType.endsPlateAppearance,
                    follower.state?.outs ?? 3 < 3, index < game.pitchSequences.count,
                    !PitchSequence.pitches(game.pitchSequences[index]).isEmpty
                {
                    within[entry.gameID] = game.pitchSequences[index]
                }
            }
            followers[entry.gameID] = follower
        }
        #expect(checked > 1000)
        #expect(counted > 900)
        // Between halves the board says so until the next half's first pitch (only a leadoff
        // batter who put the first pitch in play is announced from Mid or End); from it on, the
        // next half's batter and count.
        #expect(between > 30)
        #expect(nextHalves > 100)
        #expect(pitches > 2000)
        #expect(afterPlays > 10)
        #expect(wrong.isEmpty, "\(wrong.count) wrong: \(wrong.prefix(10))")
    }

    /// A 2020 doubleheader game is scheduled for seven innings: the board says so from the start
    /// (seven line-score columns), not only once the game is over.
    @Test func aSevenInningGameHasSevenColumnsFromTheStart() throws {
        let games = try ReplaySchedule.games(on: "2020-08-25", data: [TestData.path("retrosheet")])
        let sevens = games.filter { $0.record.scheduledInnings == 7 }
        #expect(sevens.count == 4)
        for game in sevens {
            var follower = GameFollower(gameID: game.record.id)
            _ = follower.follow(.scheduled(game.info, start: game.start))
            #expect(LiveBoard.snapshot(follower, at: game.start).scheduledInnings == 7, "\(game.record.id)")
            _ = follower.follow(.lineups(game.record.startingAppearances, homeBatsFirst: game.record.homeBatsFirst))
            _ = follower.follow(.status(GameStatus(.live), result: nil))
            _ = follower.follow(.updates(game.updates.prefix(10).map(\.update)))
            #expect(LiveBoard.snapshot(follower, at: game.start).scheduledInnings == 7, "\(game.record.id)")
        }
        #expect(games.filter { $0.record.scheduledInnings == 9 }.allSatisfy { $0.info.scheduledInnings == nil })
    }
}
