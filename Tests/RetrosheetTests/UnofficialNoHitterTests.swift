import Retrosheet
import TestSupport
import Testing

/// MLB's rules for what is not an official no-hitter, on real no-hitters of the shared files cut
/// short, re-scored or extended.
@Suite struct UnofficialNoHitterTests {
    /// The lines of one real game, to be edited.
    struct RealGame {
        var file: String
        var lines: [String]

        init(_ file: String, _ id: String) throws {
            self.file = file
            let all = try TestData.lines(file).map(String.init)
            let start = all.firstIndex(of: "id,\(id)")!
            let end = all[(start + 1)...].firstIndex { $0.hasPrefix("id,") } ?? all.endIndex
            lines = Array(all[start..<end])
        }

        static func inningAndSide(_ line: String) -> (inning: Int, side: Int)? {
            guard line.hasPrefix("play,") else { return nil }
            let fields = line.split(separator: ",", omittingEmptySubsequences: false)
            return (Int(fields[1])!, Int(fields[2])!)
        }

        /// Ends the game after `innings` complete innings, or after the top half of the next one.
        mutating func cut(afterInnings innings: Int, plusTopHalf: Bool = false) {
            let first = lines.firstIndex { line in
                guard let (inning, side) = Self.inningAndSide(line) else { return false }
                return inning > innings + 1 || (inning == innings + 1 && (side == 1 || !plusTopHalf))
            }!
            lines = Array(lines[..<first])
        }

        /// Rewrites the event of the (first) play record whose event is `event` (by `batter`, if given).
        mutating func rescore(_ event: String, as newEvent: String, batter: String? = nil) {
            let index = lines.firstIndex {
                $0.hasPrefix("play,") && $0.hasSuffix("," + event) && (batter == nil || $0.contains(",\(batter!),"))
            }!
            lines[index] = String(lines[index].dropLast(event.count)) + newEvent
        }

        mutating func setInfo(_ key: String, _ value: String) {
            let index = lines.firstIndex { $0.hasPrefix("info,\(key),") }!
            lines[index] = "info,\(key),\(value)"
        }

        /// Adds records at the end of the game (before its `data` records).
        mutating func extend(with records: [String]) {
            let end = lines.firstIndex { $0.hasPrefix("data,") } ?? lines.endIndex
            lines.insert(contentsOf: records, at: end)
        }

        func bids() throws -> GameBids {
            let games = EventFileReader(file: file, bytes: Array((lines.joined(separator: "\n") + "\n").utf8)).games()
            return try GameBids.replay(try games[0].get())
        }
    }

    static let giolito = ("retrosheet/2020/2020CHA.EVA", "CHA202008250")  // home, 4-0 over PIT
    static let mills = ("retrosheet/2020/2020MIL.EVN", "MIL202009130")  // road, CHN 12-0 at MIL
    static let bailey = ("retrosheet/2012/2012PIT.EVN", "PIT201209280")  // road, CIN 1-0 at PIT

    @Test func theRealGamesAreOfficial() throws {
        #expect(try RealGame(Self.giolito.0, Self.giolito.1).bids().tracker[.home].status == .official)
        #expect(try RealGame(Self.mills.0, Self.mills.1).bids().tracker[.away].status == .official)
    }

    @Test(arguments: [7, 8])
    func homeNoHitterCalledShortIsNotOfficial(innings: Int) throws {
        var game = try RealGame(Self.giolito.0, Self.giolito.1)
        game.cut(afterInnings: innings)
        let bid = try game.bids().tracker[.home]
        #expect(bid.isHitless)
        #expect(bid.outs == innings * 3)
        #expect(bid.status == .notOfficial(.shortenedGame))
    }

    @Test(arguments: [7, 8])
    func roadNoHitterCalledShortIsNotOfficial(innings: Int) throws {
        var game = try RealGame(Self.mills.0, Self.mills.1)
        game.cut(afterInnings: innings)
        let bids = try game.bids()
        #expect(bids.final.score.away > bids.final.score.home)
        #expect(bids.tracker[.away].outs == innings * 3)
        #expect(bids.tracker[.away].status == .notOfficial(.shortenedGame))
    }

    @Test func sevenInningDoubleheaderGameIsNotOfficial() throws {
        var game = try RealGame(Self.giolito.0, Self.giolito.1)
        game.cut(afterInnings: 7)
        game.setInfo("innings", "7")
        let bid = try game.bids().tracker[.home]
        #expect(bid.outs == 21)
        #expect(bid.status == .notOfficial(.sevenInningDoubleheader))
    }
}

extension UnofficialNoHitterTests {
    /// The rules that need a 1-0 road no-hitter: Homer Bailey's, 2012.
    @Suite(.extended, .heavy) struct Extended {
        @Test func theRealGameIsOfficial() throws {
            #expect(
                try RealGame(UnofficialNoHitterTests.bailey.0, UnofficialNoHitterTests.bailey.1).bids().tracker[.away]
                    .status == .official)
        }

        @Test func roadTeamThatLosesHasPitchedOnlyEightInnings() throws {
            var game = try RealGame(UnofficialNoHitterTests.bailey.0, UnofficialNoHitterTests.bailey.1)
            // Take away Cincinnati's run, give Pittsburgh one on an error, and end the game after
            // the top of the 9th, as it would with the home team ahead.
            game.rescore("9/SF/F.3-H;2-3", as: "9/F")
            game.rescore("E5/G.B-1", as: "E5/G.B-H(UR)")
            game.cut(afterInnings: 8, plusTopHalf: true)
            let bids = try game.bids()
            #expect(bids.final.score.home == 1)
            #expect(bids.final.score.away == 0)
            #expect(bids.tracker[.away].isHitless)
            #expect(bids.tracker[.away].outs == 24)
            #expect(bids.tracker[.away].status == .notOfficial(.roadTeamLostInEightInnings))
        }

        /// Bailey's game tied 0-0 after nine (Cincinnati's run re-scored away), with a new Pittsburgh
        /// reliever and a 10th inning by the next batters in order.
        static func tiedAfterNine(bottomOfTenth: [String]) throws -> GameBids {
            var game = try RealGame(UnofficialNoHitterTests.bailey.0, UnofficialNoHitterTests.bailey.1)
            game.rescore("9/SF/F.3-H;2-3", as: "9/F")
            game.extend(
                with: [
                    "play,10,0,roles001,00,,NP", "sub,grilj001,\"Jason Grilli\",1,9,1",
                    "play,10,0,roles001,01,CX,63/G", "play,10,0,stubd001,02,CCS,K", "play,10,0,hanir001,00,X,8/F",
                ] + bottomOfTenth)
            return try game.bids()
        }

        @Test func hitlessNineBrokenUpInExtraInningsIsNotOfficial() throws {
            let bids = try Extended.tiedAfterNine(bottomOfTenth: [
                "play,10,1,mercj002,00,X,S8/G", "play,10,1,mccua001,10,BX,D7/L.1-H",
            ])
            let bid = bids.tracker[.away]
            #expect(bids.final.score.home == 1)
            #expect(bid.outs == 27)
            #expect(bid.firstHit?.inning == 10)
            #expect(bid.status == .notOfficial(.brokenInExtraInnings))
            #expect(SeasonBids.unofficial(SideSummary.sides(of: bids)).map(\.pitchingTeam) == ["CIN"])
        }

        @Test func hitlessThroughExtraInningsIsOfficialEvenInALoss() throws {
            let bids = try Extended.tiedAfterNine(bottomOfTenth: [
                "play,10,1,mercj002,31,BBBSB,W", "play,10,1,mccua001,00,,SB2", "play,10,1,mccua001,10,BX,E6/G.2-H;B-1",
            ])
            let bid = bids.tracker[.away]
            #expect(bids.final.score.home == 1)
            #expect(bid.isHitless)
            #expect(bid.outs == 27)
            #expect(bid.status == .official)
            #expect(!bid.isPerfect)
        }
    }
}
