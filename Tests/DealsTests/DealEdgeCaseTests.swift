import Alerts
import Baseball
import Deals
import Foundation
import Retrosheet
import TestSupport
import Testing

/// The edge cases of deal days, each on a real game of the Retrosheet seasons.
@Suite struct DealEdgeCaseTests {
    /// A rule for `team` in the file format, with `when` as JSON.
    static func rule(_ id: String, team: (mlb: Int, retro: String), when: String, redeem: String = "next_local_day")
        throws -> [DealRule]
    {
        let json = """
            {"format": "nohit-deals/1", "rules": [{"id": "\(id)", "version": 1, "sponsor": "Test",
             "team": {"mlb": \(team.mlb), "retro": "\(team.retro)"}, "games": {"types": ["R"], "venue": "any"},
             "when": \(when), "reward": {"text": "A test reward", "code": "TEST"},
             "redeem": {"kind": "\(redeem)"}, "time_zone": "America/New_York",
             "effective": {"from": "2012-01-01", "to": null}, "source": "a test"}]}
            """
        return try DealRuleFile.parse(Data(json.utf8), file: "test.json")
    }

    static func games(_ season: String, file: String) async throws -> [DealGame] {
        let (games, problems) = await SeasonDeals.games(of: [TestData.path("retrosheet/\(season)/\(file)")])
        #expect(problems.isEmpty)
        return games
    }

    static func shipped() throws -> [DealRule] { try DealRuleFile.load([DealRuleFile.shippedPath]) }

    /// PHI202009181 and -2 (Sep 18 2020, 7-0 and 8-7 over Toronto): both games qualify, two
    /// triggers with their own ids, one deal day.
    @Test func aDoubleheaderWhereBothGamesQualifyIsOneDealDay() async throws {
        let rules = try Self.rule(
            "test-phillies", team: (143, "PHI"), when: #"{"all": [{"result": "win"}, {"runs_for": {">=": 7}}]}"#)
        let games = try await Self.games("2020", file: "2020PHI.EVN")
        let triggers = SeasonDeals.triggers(games, rules: rules).filter { $0.gameDate == "2020-09-18" }
        #expect(triggers.map(\.gameID) == ["PHI202009181", "PHI202009182"])
        #expect(Set(triggers.map(\.id)).count == 2)
        #expect(triggers.allSatisfy { $0.redeemDays == ["2020-09-19"] })
        let history = DealHistory(triggers: triggers, season: 2020)
        #expect(history.totalDays == 1)
        #expect(history.days.first?.triggers.count == 2)
        #expect(history.byMonth.map(\.days) == [1])
        // One alert for the day: both triggers name the same moment.
        let moments = triggers.map {
            Moment.deal($0.notice(rules[0]), gameID: $0.gameID, score: .init(away: 0, home: 7), inning: 9)
        }
        #expect(Set(moments.map(\.id)) == ["deal-test-phillies-v1-2020-09-19"])
    }

    /// WAS202008090 (BAL at WAS, Aug 9 2020) was suspended in the 6th and completed at Camden
    /// Yards on Aug 14: it counts on the 14th (deal day the 15th), under its official id and date.
    @Test func aSuspendedGameCountsOnTheDayItWasCompleted() async throws {
        let rules = try Self.rule("test-nationals-any", team: (120, "WAS"), when: #"{"innings": {">=": 1}}"#)
        let games = try await Self.games("2020", file: "2020WAS.EVN")
        let game = try #require(games.first { $0.gameID == "WAS202008090" })
        #expect(game.date == "2020-08-09")
        #expect(game.completedOn == "2020-08-14")
        #expect(game.runs == PerSide(away: 6, home: 2))
        let trigger = try #require(SeasonDeals.triggers([game], rules: rules).first)
        #expect(trigger.dealDate == "2020-08-14")
        #expect(trigger.redeemDays == ["2020-08-15"])
        #expect(trigger.gameDate == "2020-08-09")
    }

    /// WAS202009222 (Sep 22 2020, game 2): a 7-inning doubleheader game that went to the 8th,
    /// won 8-7 on Yadiel Hernandez's home run: Papa John's (7 in a win) triggers on that play.
    @Test func anExtraInningSevenInningDoubleheaderGameTriggersOnThePlayThatDidIt() async throws {
        let games = try await Self.games("2020", file: "2020WAS.EVN")
        let game = try #require(games.first { $0.gameID == "WAS202009222" })
        #expect(game.scheduledInnings == 7)
        #expect(game.innings == 8)
        #expect(game.gameNumber == 2)
        let trigger = try #require(
            SeasonDeals.triggers([game], rules: try Self.shipped()).first { $0.ruleID == "papa-johns-dc-nationals" })
        #expect(trigger.version == 2)
        #expect(trigger.play == "Yadiel Hernandez's home run in the 8th made it 8")
        #expect(trigger.redeemDays == ["2020-09-23"])
    }

    /// MIA202009202 (Sep 20 2020, game 2, 7 innings): Nationals 15, Marlins 0 counts as any win.
    @Test func aSevenInningDoubleheaderGameCounts() async throws {
        let games = try await Self.games("2020", file: "2020MIA.EVN")
        let game = try #require(games.first { $0.gameID == "MIA202009202" })
        #expect(game.scheduledInnings == 7)
        #expect(game.innings == 7)
        let triggers = SeasonDeals.triggers([game], rules: try Self.shipped())
        #expect(triggers.map(\.ruleID) == ["papa-johns-dc-nationals"])
        #expect(triggers.first?.why.hasPrefix("Nationals 15, Marlins 0 on Sunday, Sep 20: ") == true)
    }

    /// A game is evaluated only when final: a postponed game (status postponed, never played that
    /// day) and a game under way give no deal game at all; the same game, played to its end,
    /// does. (Retrosheet's files hold only games played, so the postponement is the Stats API's
    /// status put to a real game's follower.)
    @Test func aPostponedOrUnfinishedGameIsNeverEvaluated() async throws {
        let path = TestData.path("retrosheet/2020/2020WAS.EVN")
        let reader = try EventFileReader(path: path)
        var record: GameRecord?
        reader.forEachGame { if case .success(let game) = $0, game.id == "WAS202009110" { record = game } }
        let game = try #require(record)
        var follower = GameFollower(gameID: game.id)
        _ = follower.follow(.lineups(game.startingAppearances, homeBatsFirst: game.homeBatsFirst))
        _ = follower.follow(.status(GameStatus(.postponed, detail: "Rain"), result: nil))
        #expect(DealGame(follower: follower) == nil)
        let updates = try game.updates()
        _ = follower.follow(.status(GameStatus(.live), result: nil))
        _ = follower.follow(.updates(Array(updates.prefix(updates.count / 2))))
        #expect(DealGame(follower: follower) == nil)
        _ = follower.follow(.updates(Array(updates.dropFirst(updates.count / 2))))
        _ = follower.follow(.status(GameStatus(.final), result: game.result))
        let final = try #require(DealGame(follower: follower))
        #expect(final.runs == PerSide(away: 7, home: 8))
    }

    /// A tie is not a win; a forfeit is nobody's win.
    @Test func aTieOrAForfeitIsNotAWin() throws {
        let rules = try Self.rule("test-win", team: (120, "WAS"), when: #"{"result": "win"}"#)
        var game = DealGame(
            gameID: "WAS202009110", date: "2020-09-11", completedOn: nil, gameType: "R", gameNumber: 0,
            teams: PerSide(away: "ATL", home: "WAS"), names: PerSide(away: "Braves", home: "Nationals"),
            runs: PerSide(away: 3, home: 3), innings: 9, scheduledInnings: 9, forfeit: false, saveBy: nil,
            savePitcher: nil, tally: GameTally(), players: [:])
        #expect(SeasonDeals.triggers([game], rules: rules).isEmpty)
        game.runs = PerSide(away: 0, home: 9)
        game.forfeit = true
        #expect(SeasonDeals.triggers([game], rules: rules).isEmpty)
        game.forfeit = false
        #expect(SeasonDeals.triggers([game], rules: rules).count == 1)
    }

    /// A NO says why: the team lost, won without enough, or did not play.
    @Test func aDayThatIsNotADealDaySaysWhy() throws {
        let rule = try Self.rule(
            "test-runs", team: (120, "WAS"), when: #"{"all": [{"result": "win"}, {"runs_for": {">=": 6}}]}"#)[0]
        func game(_ date: String, away: Int, home: Int) -> DealGame {
            DealGame(
                gameID: "WAS\(date.replacingOccurrences(of: "-", with: ""))0", date: date, completedOn: nil,
                gameType: "R", gameNumber: 0, teams: PerSide(away: "ATL", home: "WAS"),
                names: PerSide(away: "Braves", home: "Nationals"), runs: PerSide(away: away, home: home), innings: 9,
                scheduledInnings: 9, forfeit: false, saveBy: nil, savePitcher: nil, tally: GameTally(), players: [:])
        }
        let lost = game("2020-09-10", away: 5, home: 3)
        let won = game("2020-09-11", away: 2, home: 4)
        #expect(DealBook.whyNot(rule, day: "2020-09-11", games: [lost, won]) == "the Nationals lost 3-5 yesterday")
        #expect(
            DealBook.whyNot(rule, day: "2020-09-12", games: [lost, won])
                == "the Nationals won 4-2 yesterday; not enough for the deal")
        #expect(DealBook.whyNot(rule, day: "2020-09-14", games: [lost, won]) == "no Nationals game yesterday")
        #expect(DealBook.whyNot(rule, day: "2011-06-01", games: []) == "the deal is not in force today")
    }
}

extension DealEdgeCaseTests {
    @Suite(.extended, .heavy) struct Extended {
        /// WAS201908170 (MIL at WAS, Aug 17 2019, first pitch 7:06 pm, 5 h 40 min): it ended after
        /// midnight and keeps its official date: the deal day is Aug 18, not the 19th.
        @Test func aGameEndingAfterMidnightKeepsItsOfficialDate() async throws {
            let rules = try DealEdgeCaseTests.rule(
                "test-nationals-any", team: (120, "WAS"), when: #"{"innings": {">=": 1}}"#)
            let games = try await DealEdgeCaseTests.games("2019", file: "2019WAS.EVN")
            let game = try #require(games.first { $0.gameID == "WAS201908170" })
            let trigger = try #require(SeasonDeals.triggers([game], rules: rules).first)
            #expect(trigger.dealDate == "2019-08-17")
            #expect(trigger.redeemDays == ["2019-08-18"])
        }

        /// WAS201507170 (LAN at WAS, Jul 17 2015) was suspended by a light failure and completed on
        /// the 18th, Drew Storen saving it: Chick-fil-A's home save counts on the 18th.
        @Test func aSuspendedHomeSaveCountsOnItsCompletionDay() async throws {
            let games = try await DealEdgeCaseTests.games("2015", file: "2015WAS.EVN")
            let game = try #require(games.first { $0.gameID == "WAS201507170" })
            let trigger = try #require(
                SeasonDeals.triggers([game], rules: try DealEdgeCaseTests.shipped()).first {
                    $0.ruleID == "chick-fil-a-dc-nationals"
                })
            #expect(trigger.dealDate == "2015-07-18")
            #expect(trigger.redeemDays == ["2015-07-19"])
            #expect(trigger.play == "Drew Storen earned the save")
        }
    }
}
