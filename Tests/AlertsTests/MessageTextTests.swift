import Alerts
import Baseball
import TestSupport
import Testing

/// Alert wording on the moments of a real no-hitter.
@Suite struct MessageTextTests {
    static let game = GameInfo(
        id: "CHA202008250", date: "2020-08-25",
        away: .init(club: TeamDirectory.club("PIT", on: "2020-08-25")!),
        home: .init(club: TeamDirectory.club("CHA", on: "2020-08-25")!),
        broadcasts: [
            Broadcast(kind: .tv, name: "NBC Sports Chicago", side: .home),
            Broadcast(kind: .tv, name: "ESPN", isNational: true, side: .home),
            Broadcast(kind: .tv, name: "ESPN", isNational: true, side: .away),
            Broadcast(kind: .radio, name: "WGN Radio 720", callSign: "WGN", side: .home),
        ],
        players: ["gioll001": "Lucas Giolito"])

    static func giolitoMoments() throws -> [Moment] {
        let record = try MomentTests.game("retrosheet/2020/2020CHA.EVA", "CHA202008250")
        return try MomentTests.moments(of: record).1
    }

    @Test func progressAlertNamesPitcherScoreSituationAndWhereToWatch() throws {
        let seventh = try #require(try Self.giolitoMoments().first { $0.kind == .hitlessInnings && $0.outs == 21 })
        let message = MessageText.render(seventh, game: Self.game)
        #expect(message.title == "Lucas Giolito: no-hitter through 7")
        #expect(
            message.body
                == "The White Sox have held the Pirates hitless through 7 innings. PIT 0, CWS 4, end of the top of the 7th. Watch: ESPN, NBC Sports Chicago. Listen: WGN (WGN Radio 720)."
        )
        #expect(message.bidKey == "CHA202008250-home")
    }

    @Test func ninthInningOutsAndCompletion() throws {
        let moments = try Self.giolitoMoments()
        let twoOuts = try #require(moments.first { $0.kind == .ninthInningOut && $0.outs == 26 })
        #expect(MessageText.render(twoOuts, game: Self.game).title == "Two outs in the 9th: Lucas Giolito's no-hitter")
        // Without its last out (this follower has no names for the players: the last out in words
        // is checked where it has them, ReplayPipelineTests and NoHitServiceTests).
        var completed = try #require(moments.last)
        #expect(completed.lastPlay != nil)
        completed.lastPlay = nil
        let message = MessageText.render(completed, game: Self.game)
        #expect(message.title == "No-hitter! Lucas Giolito")
        #expect(message.body == "The White Sox no-hit the Pirates. Final: PIT 0, CWS 4.")
    }

    /// The odds and a completed no-hitter's meaning name the word: jinx-safe wording leaves
    /// them out; plain wording says them.
    @Test func theOddsAndTheMeaningAreLeftOutOfJinxSafeWording() {
        var moment = Moment(
            id: "m", gameID: "CHA202008250", pitchingSide: .home, kind: .hitlessInnings, outs: 21, inning: 7,
            battingSide: .away, outsInInning: 3, score: PerSide(away: 0, home: 4), perfect: false,
            pitchers: [PlayerID("gioll001")!])
        moment.odds = BidChance(
            outs: 21, bids: 798, noHitters: 182, share: 0.228, since: 1950,
            sentence: "1 in 4 such bids since 1950 ended as no-hitters (798 bids)")
        #expect(MessageText.render(moment, game: Self.game).body.contains("History: 1 in 4 such bids"))
        #expect(!MessageText.render(moment, game: Self.game, jinxSafe: true).body.lowercased().contains("no-hitter"))
        moment.kind = .completed
        moment.outs = 27
        moment.odds = nil
        moment.lastPlay = "Erik Gonzalez lines out to right field"
        moment.meaning = "The White Sox's first no-hitter since Philip Humber's perfect game on April 21, 2012."
        let plain = MessageText.render(moment, game: Self.game).body
        #expect(plain.contains("The last out: Erik Gonzalez lines out to right field. The White Sox's first no-hitter"))
        let safe = MessageText.render(moment, game: Self.game, jinxSafe: true).body
        #expect(safe.contains("The last out:") && !safe.lowercased().contains("no-hitter"), "\(safe)")
    }

    @Test func jinxSafeWordingNeverSaysIt() throws {
        for moment in try Self.giolitoMoments() {
            let message = MessageText.render(moment, game: Self.game, jinxSafe: true)
            let text = (message.title + " " + message.body).lowercased()
            #expect(!text.contains("no-hitter"))
            #expect(!text.contains("no-hit "))
        }
    }

    @Test func brokenUpSaysByWhomHowAndWhen() throws {
        try Self.checkBrokenUp(
            "retrosheet/2020/2020MIN.EVA", "MIN202008180", date: "2020-08-18",
            teams: (
                .init(club: TeamDirectory.club("MIL", on: "2020-08-25")!),
                .init(club: TeamDirectory.club("MIN", on: "2020-08-25")!)
            ),
            players: ["sogae001": "Eric Sogard", "maedk001": "Kenta Maeda"],
            body:
                "Eric Sogard broke it up with a single off Kenta Maeda, nobody out in the top of the 9th. MIL 0, MIN 3."
        )
    }

    /// The broken-up alert of a real game names the batter, the hit, the pitcher and when.
    static func checkBrokenUp(
        _ file: String, _ id: String, date: String, teams: (away: GameInfo.Team, home: GameInfo.Team),
        players: [String: String], body: String
    ) throws {
        let record = try MomentTests.game(file, id)
        let broken = try #require(try MomentTests.moments(of: record).1.last { $0.kind == .brokenUp })
        let game = GameInfo(id: record.id, date: date, away: teams.away, home: teams.home, players: players)
        let message = MessageText.render(broken, game: game)
        #expect(message.title == "No-hitter broken up")
        #expect(message.body == body)
    }

    @Test func longTextIsCutToFitAPayload() throws {
        var game = Self.game
        game.broadcasts = (0..<400).map { Broadcast(kind: .tv, name: "Channel number \($0) of many") }
        let moment = try #require(try Self.giolitoMoments().first)
        let message = MessageText.render(moment, game: game)
        #expect(message.body.utf8.count <= MessageText.maximumTextBytes)
        #expect(message.body.hasSuffix("…"))
    }
}

extension MessageTextTests {
    @Suite(.extended, .heavy) struct Extended {
        @Test func brokenUpSaysByWhomHowAndWhen2012() throws {
            try MessageTextTests.checkBrokenUp(
                "retrosheet/2012/2012DET.EVA", "DET201205180", date: "2012-05-18",
                teams: (
                    .init(club: TeamDirectory.club("PIT", on: "2020-08-25")!),
                    .init(club: TeamDirectory.club("DET", on: "2020-08-25")!)
                ),
                players: ["harrj002": "Josh Harrison", "verlj001": "Justin Verlander"],
                body:
                    "Josh Harrison broke it up with a single off Justin Verlander, 1 out in the top of the 9th. PIT 0, DET 6."
            )
        }
    }
}
