import Foundation
import JSON
import TestSupport
import Testing

@testable import StatsAPI

/// Every recorded Stats API response in `shared/data/statsapi` decodes into its type, and the
/// recorded diffPatch responses apply to the snapshots they were taken after.
@Suite(.extended, .heavy) struct RecordedResponseTests {
    static func document(_ name: String) throws -> JSONValue {
        try JSONValue(parsing: Data(TestData.bytes("statsapi/\(name)")))
    }

    static func decode<Value: Decodable>(_ type: Value.Type, _ name: String) throws -> Value {
        try JSONDecoder().decode(type, from: Data(TestData.bytes("statsapi/\(name)")))
    }

    static let hitTypes: Set<String> = ["single", "double", "triple", "home_run"]

    @Test(arguments: [
        "gumbo-744914-final.json", "gumbo-746215-final.json", "gumbo-747175-final.json",
        "gumbo-747175-timecode.json",
    ])
    func finishedFeedsDecodeAndTheirPlaysAddUpToTheLinescore(name: String) throws {
        let feed = try Self.decode(GameFeed.self, name)
        #expect(feed.gameData.status.phase == .final)
        #expect(feed.metaData.wait == 10)
        let plays = feed.liveData.plays.allPlays
        #expect(!plays.isEmpty)
        #expect(plays.allSatisfy { $0.about.isComplete })
        #expect(plays.map(\.about.atBatIndex) == Array(0..<plays.count))
        // Hits by each side's batters, from the plays, are the linescore's.
        let line = try #require(feed.liveData.linescore?.teams)
        let awayHits = plays.filter {
            $0.about.halfInning == "top" && Self.hitTypes.contains($0.result.eventType ?? "")
        }
        let homeHits = plays.filter {
            $0.about.halfInning == "bottom" && Self.hitTypes.contains($0.result.eventType ?? "")
        }
        #expect(awayHits.count == line.away.hits)
        #expect(homeHits.count == line.home.hits)
        // Outs are counted after the play: never more than 3, and 3 ends every half-inning but
        // maybe the last.
        #expect(plays.allSatisfy { (0...3).contains($0.count.outs) })
        let box = try #require(feed.liveData.boxscore)
        #expect(!box.teams.home.pitchers.isEmpty && !box.teams.away.pitchers.isEmpty)
        // The starters in the boxscore pitched the first plays.
        #expect(plays.first { $0.about.halfInning == "top" }?.matchup.pitcher.id == box.teams.home.pitchers[0])
        #expect(plays.first { $0.about.halfInning == "bottom" }?.matchup.pitcher.id == box.teams.away.pitchers[0])
        #expect(plays.allSatisfy { $0.malformedEvents.isEmpty })
    }

    @Test(arguments: ["gumbo-776792-live.json", "gumbo-746139-snapshot-a.json", "gumbo-746139-snapshot-b.json"])
    func liveFeedsDecode(name: String) throws {
        let feed = try Self.decode(GameFeed.self, name)
        #expect(feed.gameData.status.phase == .live)
        #expect(feed.metaData.timeStamp.count == 15)
        // Only the last plate appearance can be in progress.
        #expect(feed.liveData.plays.allPlays.dropLast().allSatisfy { $0.about.isComplete })
    }

    /// The plate appearance in progress of a real live feed: Davis Wendzel at 0-2 after a 97 mph
    /// sinker (746139, snapshot a); none before a pitch (snapshot b, Miguel Vargas up at 0-0) or
    /// between plate appearances (776792).
    @Test func thePlateAppearanceInProgressIsRead() throws {
        let a = try GumboGame(Self.decode(GameFeed.self, "gumbo-746139-snapshot-a.json"))
        let atBat = try #require(a.atBat)
        #expect((atBat.balls, atBat.strikes) == (0, 2))
        #expect(atBat.lastPitch == "Sinker")
        #expect(atBat.lastPitchSpeed == 97.3)
        #expect(atBat.afterUpdates == a.updates.count)
        #expect(a.info.name(of: atBat.batter) == "Davis Wendzel")
        #expect(a.info.venue == "Dodger Stadium")
        #expect(a.info.scheduledInnings == nil)  // nine
        #expect(try GumboGame(Self.decode(GameFeed.self, "gumbo-746139-snapshot-b.json")).atBat == nil)
        #expect(try GumboGame(Self.decode(GameFeed.self, "gumbo-776792-live.json")).atBat == nil)
        // Said once, and again only when it moves.
        var ledger = StatsAPIFeedLedger()
        let items = ledger.items(for: a, now: Date())
        #expect(items.filter { if case .atBat = $0 { true } else { false } }.count == 1)
        #expect(ledger.items(for: a, now: Date()).isEmpty)
    }

    @Test func schedulesDecodeWithBroadcastsAndLinescores() throws {
        let plain = try Self.decode(Schedule.self, "schedule-2024-10-20_22.json")
        #expect(!plain.games.isEmpty)
        for name in ["dsotm-schedule.json", "dsotm-schedule_hydrated_team.json", "dsotm-game_changes.json"] {
            let schedule = try Self.decode(Schedule.self, name)
            #expect(!schedule.dates.isEmpty, "\(name)")
            #expect(schedule.games.allSatisfy { $0.gamePk > 0 && !$0.gameDate.isEmpty }, "\(name)")
        }
    }

    @Test func linescoresBoxscorePlayByPlayAndThePushMessageDecode() throws {
        let linescore = try Self.decode(Linescore.self, "linescore-747175.json")
        let feed = try Self.decode(GameFeed.self, "gumbo-747175-final.json")
        #expect(linescore.teams == feed.liveData.linescore?.teams)
        _ = try Self.decode(Linescore.self, "dsotm-linescore.json")
        let box = try Self.decode(Boxscore.self, "dsotm-boxscore.json")
        #expect(!box.teams.away.pitchers.isEmpty)
        let plays = try Self.decode(PlayByPlay.self, "dsotm-play_by_play.json")
        #expect(!plays.allPlays.isEmpty)
        let push = try Self.decode(PushMessage.self, "gameday-push-message.json")
        #expect(push.gamePk == "745646")
        #expect(push.wait == 10)
    }

    @Test func malformedPlayEventsAreReportedNotFatal() throws {
        let bytes = Data(try TestData.bytes("statsapi/dsotm-malformed_play_events.json"))
        // Read strictly, the pitch without a type code is an error naming where it is.
        struct Strict: Decodable { var playEvents: [PlayEvent] }
        #expect {
            try JSONDecoder().decode(Strict.self, from: bytes)
        } throws: { error in
            Lenient<PlayEvent>.describe(error) == "missing playEvents[1].details.type.code"
        }
        // Read as a play, the play itself is intact and the bad event is named.
        let play = try JSONDecoder().decode(PlayRecord.self, from: bytes)
        #expect(play.result.eventType == "force_out")
        #expect(play.count.outs == 2)
        #expect(play.runners.count == 4)
        #expect(play.malformedEvents == ["playEvents[1]: missing details.type.code"])
        #expect(play.playEvents[0].value?.details.type?.code == "EP")
    }

    @Test func diffPatchesApplyToTheSnapshotsTheyFollow() throws {
        for (snapshot, patchFile, timeStamp) in [
            ("gumbo-746139-snapshot-a.json", "diffpatch-746139-no-move.json", "20240612_041302"),
            ("gumbo-746139-snapshot-b.json", "diffpatch-746139-with-move.json", "20240612_042758"),
        ] {
            var feed = try Self.document(snapshot)
            guard case .patches(let patches) = try DiffPatchResponse(try Self.document(patchFile)) else {
                Issue.record("\(patchFile) is not a list of patches")
                continue
            }
            for patch in patches { try patch.apply(to: &feed) }
            let typed = try feed.decode(GameFeed.self)
            #expect(typed.metaData.timeStamp == timeStamp)
            #expect(typed.gamePk == 746139)
        }
    }

    @Test func aPatchForAnotherStateFailsAndLeavesTheFeedAsItWas() throws {
        let original = try Self.document("gumbo-746139-snapshot-a.json")
        guard case .patches(let patches) = try DiffPatchResponse(try Self.document("diffpatch-745646-missed.json"))
        else {
            Issue.record("not patches")
            return
        }
        #expect(patches.count == 2)
        var feed = original
        var failures = 0
        for patch in patches {
            do {
                try patch.apply(to: &feed)
            } catch {
                failures += 1
            }
        }
        // Another game's patches do not apply here (the poller then fetches the whole feed) and
        // a failed patch changes nothing.
        #expect(failures > 0)
        let afterFailures = feed
        var again = afterFailures
        #expect(throws: JSONPatchError.self) {
            for patch in patches { try patch.apply(to: &again) }
        }
        #expect(again == afterFailures)
    }

    @Test func aWholeFeedAsADiffPatchResponseIsTakenAsIs() throws {
        let feed = try Self.document("gumbo-747175-final.json")
        #expect(try DiffPatchResponse(feed) == .feed(feed))
        #expect(throws: StatsAPIError.self) { try DiffPatchResponse(.object(["hello": .string("world")])) }
    }

    @Test func truncatedJSONIsAnError() throws {
        let bytes = Data(try TestData.bytes("statsapi/gumbo-747175-final.json"))
        #expect(throws: (any Error).self) { try JSONValue(parsing: bytes.prefix(bytes.count / 2)) }
        #expect(throws: (any Error).self) { try JSONDecoder().decode(GameFeed.self, from: bytes.prefix(1000)) }
    }
}
