import Alerts
import Baseball
import Foundation
import Testing

/// The planner, case by case.
@Suite struct PlannerTests {
    static let time = Date(timeIntervalSince1970: 1_598_403_600)  // 2020-08-26 01:00 UTC (20:00 in Chicago)

    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var kind: Moment.Kind
        var outs: Int
        var teams = ["CHA", "PIT"]
        var setup: @Sendable (inout Preferences) -> Void = { _ in }
        var history = DeviceBidHistory()
        var channel = DeviceChannel.console(label: "x")
        /// The odds of history the moment carries (its share), when the service has them.
        var share: Double?
        var expected: PlanDecision
        var testDescription: String { name }
    }

    static let progressed = DeviceBidHistory(progressSent: true)

    static let cases: [Case] = [
        Case(name: "default threshold reached", kind: .hitlessInnings, outs: 18, expected: .send(notBefore: time)),
        Case(name: "below the default threshold", kind: .hitlessInnings, outs: 15, expected: .skip(.belowThreshold)),
        Case(
            name: "favourite team's earlier threshold", kind: .hitlessInnings, outs: 12,
            setup: { $0.favouriteTeams = ["PIT"] }, expected: .send(notBefore: time)),
        Case(
            name: "own threshold of 8", kind: .hitlessInnings, outs: 21, setup: { $0.thresholdInnings = 8 },
            expected: .skip(.belowThreshold)),
        Case(
            name: "once per bid: only the first", kind: .hitlessInnings, outs: 21,
            setup: { $0.frequency = .oncePerBid },
            history: progressed, expected: .skip(.frequency)),
        Case(
            name: "every inning: the next one too", kind: .hitlessInnings, outs: 21, history: progressed,
            expected: .send(notBefore: time)),
        Case(
            name: "ninth-inning outs need the every-out setting", kind: .ninthInningOut, outs: 25, history: progressed,
            expected: .skip(.frequency)),
        Case(
            name: "ninth-inning outs when asked for", kind: .ninthInningOut, outs: 26,
            setup: { $0.frequency = .everyOutInNinth }, history: progressed, expected: .send(notBefore: time)),
        Case(
            name: "broken up after being told", kind: .brokenUp, outs: 25, history: progressed,
            expected: .send(notBefore: time)),
        Case(name: "broken up, never told of the bid", kind: .brokenUp, outs: 25, expected: .skip(.notFollowingBid)),
        Case(
            name: "perfect game lost, once per bid", kind: .perfectGameLost, outs: 19,
            setup: { $0.frequency = .oncePerBid },
            history: progressed, expected: .skip(.frequency)),
        Case(
            name: "pitching change while following", kind: .pitchingChange, outs: 21, history: progressed,
            expected: .send(notBefore: time)),
        Case(
            name: "completed, even with a threshold of 9", kind: .completed, outs: 27,
            setup: { $0.thresholdInnings = 9 }, expected: .send(notBefore: time)),
        Case(
            name: "ended not official is opt-in", kind: .endedNotOfficial, outs: 24, history: progressed,
            expected: .skip(.kindNotWanted)),
        Case(
            name: "ended not official when opted in", kind: .endedNotOfficial, outs: 24,
            setup: { $0.kinds.insert(.endedNotOfficial) }, history: progressed, expected: .send(notBefore: time)),
        Case(name: "revived past the threshold", kind: .revived, outs: 21, expected: .send(notBefore: time)),
        Case(
            name: "kind turned off", kind: .pitchingChange, outs: 21, setup: { $0.kinds.remove(.pitchingChange) },
            history: progressed, expected: .skip(.kindNotWanted)),
        Case(
            name: "spoiler delay", kind: .hitlessInnings, outs: 18, setup: { $0.spoilerDelaySeconds = 90 },
            expected: .send(notBefore: time.addingTimeInterval(90))),
        Case(
            name: "quiet hours skip in-progress alerts", kind: .hitlessInnings, outs: 18,
            setup: { $0.quietHours = .init(start: 19 * 60, end: 7 * 60, timeZone: "America/Chicago") },
            expected: .skip(.quietHours)),
        Case(
            name: "quiet hours hold a completed no-hitter until morning", kind: .completed, outs: 27,
            setup: { $0.quietHours = .init(start: 19 * 60, end: 7 * 60, timeZone: "America/Chicago") },
            history: progressed, expected: .send(notBefore: Date(timeIntervalSince1970: 1_598_443_200))),  // 07:00 CDT
        Case(
            name: "quiet hours elsewhere do not apply", kind: .hitlessInnings, outs: 18,
            setup: { $0.quietHours = .init(start: 22 * 60, end: 7 * 60, timeZone: "America/Chicago") },
            expected: .send(notBefore: time)),
        Case(
            name: "live activity ignores frequency", kind: .ninthInningOut, outs: 25, history: progressed,
            channel: .liveActivity(token: "ab", environment: .sandbox, topic: "t"), expected: .send(notBefore: time)),
        Case(
            name: "live activity below threshold", kind: .hitlessInnings, outs: 12,
            channel: .liveActivity(token: "ab", environment: .sandbox, topic: "t"), expected: .skip(.belowThreshold)),
        // Score alerts: a favourite team's game only; the final score by default, the rest opt-in.
        Case(
            name: "final score of a favourite team", kind: .finalScore, outs: 0, setup: { $0.favouriteTeams = ["CHA"] },
            expected: .send(notBefore: time)),
        Case(name: "final score, no favourite in the game", kind: .finalScore, outs: 0, expected: .skip(.notFavourite)),
        Case(
            name: "final score turned off", kind: .finalScore, outs: 0,
            setup: {
                $0.favouriteTeams = ["CHA"]
                $0.scoreAlerts.finalScore = false
            }, expected: .skip(.kindNotWanted)),
        Case(
            name: "game start is opt-in", kind: .gameStart, outs: 0, setup: { $0.favouriteTeams = ["PIT"] },
            expected: .skip(.kindNotWanted)),
        Case(
            name: "game start when asked for", kind: .gameStart, outs: 0,
            setup: {
                $0.favouriteTeams = ["PIT"]
                $0.scoreAlerts.gameStart = true
            }, expected: .send(notBefore: time)),
        Case(
            name: "lead change when asked for, spoiler delay held", kind: .leadChange, outs: 0,
            setup: {
                $0.favouriteTeams = ["CHA"]
                $0.scoreAlerts.leadChange = true
                $0.spoilerDelaySeconds = 30
            }, expected: .send(notBefore: time.addingTimeInterval(30))),
        Case(
            name: "lead change in quiet hours is dropped", kind: .leadChange, outs: 0,
            setup: {
                $0.favouriteTeams = ["CHA"]
                $0.scoreAlerts.leadChange = true
                $0.quietHours = .init(start: 19 * 60, end: 7 * 60, timeZone: "America/Chicago")
            }, expected: .skip(.quietHours)),
        Case(
            name: "final score in quiet hours waits for the morning", kind: .finalScore, outs: 0,
            setup: {
                $0.favouriteTeams = ["CHA"]
                $0.quietHours = .init(start: 19 * 60, end: 7 * 60, timeZone: "America/Chicago")
            }, expected: .send(notBefore: Date(timeIntervalSince1970: 1_598_443_200))),
        Case(
            name: "a live activity gets no score alert", kind: .finalScore, outs: 0,
            setup: { $0.favouriteTeams = ["CHA"] },
            channel: .liveActivity(token: "ab", environment: .sandbox, topic: "t"), expected: .skip(.kindNotWanted)),
        // Odds alerts (min_odds): the first out past the share starts the bid, innings carry on.
        Case(
            name: "an out's odds moment, no odds chosen", kind: .hitlessOut, outs: 22, share: 0.29,
            expected: .skip(.frequency)),
        Case(
            name: "an out's odds past the chosen share", kind: .hitlessOut, outs: 22, setup: { $0.minOdds = 0.25 },
            share: 0.29, expected: .send(notBefore: time)),
        Case(
            name: "an out's odds short of the chosen share", kind: .hitlessOut, outs: 21, setup: { $0.minOdds = 0.25 },
            share: 0.23, expected: .skip(.belowThreshold)),
        Case(
            name: "an out's odds once the bid is followed", kind: .hitlessOut, outs: 23, setup: { $0.minOdds = 0.25 },
            history: progressed, share: 0.37, expected: .skip(.frequency)),
        Case(
            name: "odds chosen: an inning short of them is below", kind: .hitlessInnings, outs: 21,
            setup: { $0.minOdds = 0.25 }, share: 0.23, expected: .skip(.belowThreshold)),
        Case(
            name: "odds chosen: an inning before the innings threshold, past the share", kind: .hitlessInnings,
            outs: 15, setup: { $0.minOdds = 0.04 }, share: 0.045, expected: .send(notBefore: time)),
        Case(
            name: "odds chosen, none known: the innings threshold", kind: .hitlessInnings, outs: 18,
            setup: { $0.minOdds = 0.9 }, expected: .send(notBefore: time)),
        Case(
            name: "odds moments go with hitless-innings", kind: .hitlessOut, outs: 22,
            setup: {
                $0.minOdds = 0.25
                $0.kinds = [.completed]
            }, share: 0.29, expected: .skip(.kindNotWanted)),
        Case(
            name: "a live activity starts at the odds too", kind: .hitlessOut, outs: 22, setup: { $0.minOdds = 0.25 },
            channel: .liveActivity(token: "ab", environment: .sandbox, topic: "t"), share: 0.29,
            expected: .send(notBefore: time)),
        Case(
            name: "odds chosen: the 25th out starts the bid past a half", kind: .ninthInningOut, outs: 25,
            setup: { $0.minOdds = 0.5 }, share: 0.62, expected: .send(notBefore: time)),
        Case(
            name: "odds chosen: the 26th out once followed, by frequency", kind: .ninthInningOut, outs: 26,
            setup: { $0.minOdds = 0.5 }, history: progressed, share: 0.78, expected: .skip(.frequency)),
        Case(
            name: "a live activity with odds chosen hears no ending of a bid it never showed", kind: .brokenUp,
            outs: 20, setup: { $0.minOdds = 0.25 },
            channel: .liveActivity(token: "ab", environment: .sandbox, topic: "t"), expected: .skip(.notFollowingBid)),
        Case(
            name: "a live activity is not updated at every out", kind: .hitlessOut, outs: 13,
            history: progressed, channel: .liveActivity(token: "ab", environment: .sandbox, topic: "t"), share: 0.03,
            expected: .skip(.frequency)),
    ]

    @Test(arguments: cases)
    func decides(_ testCase: Case) {
        var preferences = Preferences()
        testCase.setup(&preferences)
        let device = Device(
            id: UUID(), channel: testCase.channel, preferences: preferences, registeredAt: Self.time, secretHash: "")
        let moment = Moment(
            id: "m", gameID: "CHA202008250", pitchingSide: .home, kind: testCase.kind, outs: testCase.outs,
            inning: 7, battingSide: .away, outsInInning: 3, score: PerSide(away: 0, home: 4), perfect: false,
            pitchers: [PlayerID("gioll001")!])
        var withOdds = moment
        withOdds.odds = testCase.share.map {
            BidChance(outs: testCase.outs, bids: 100, noHitters: Int($0 * 100), share: $0, since: 1950, sentence: "")
        }
        #expect(
            Planner.decide(withOdds, teams: testCase.teams, at: Self.time, device: device, history: testCase.history)
                == testCase.expected)
    }

    /// A Live Activity that names its bid hears every change of that bid (below the threshold,
    /// an out, a pitching change, the end), at the spoiler delay, and nothing of another bid: of
    /// another game, of the other side of its game, or where the caller does not know who pitches.
    @Test func anActivityNamingItsBidHearsThatBidOnly() {
        var preferences = Preferences()
        preferences.spoilerDelaySeconds = 30
        let giolito = ActivityBid(gameID: "CHA202008250", pitchingTeam: "CWS")
        let device = Device(
            id: UUID(), channel: .liveActivity(token: "ab", environment: .sandbox, topic: "t", bid: giolito),
            preferences: preferences, registeredAt: Self.time, secretHash: "")
        func moment(_ kind: Moment.Kind, outs: Int, game: String = "CHA202008250", side: Side = .home) -> Moment {
            Moment(
                id: "m", gameID: game, pitchingSide: side, kind: kind, outs: outs, inning: outs / 3 + 1,
                battingSide: side.opponent, outsInInning: outs % 3, score: PerSide(away: 0, home: 4), perfect: false,
                pitchers: [PlayerID("gioll001")!])
        }
        let later = Self.time.addingTimeInterval(30)
        for kind in [Moment.Kind.hitlessInnings, .hitlessOut, .pitchingChange, .ninthInningOut, .brokenUp, .completed] {
            #expect(
                Planner.decide(
                    moment(kind, outs: 12), teams: ["PIT", "CHA"], at: Self.time, device: device, history: .init(),
                    pitchingTeam: "CWS") == .send(notBefore: later), "\(kind)")
        }
        let others: [(Moment, String?)] = [
            (moment(.hitlessInnings, outs: 21, game: "MIN202008250"), "CWS"),
            (moment(.hitlessInnings, outs: 21, side: .away), "PIT"),
            (moment(.hitlessInnings, outs: 21), nil),
        ]
        for (other, team) in others {
            #expect(
                Planner.decide(
                    other, teams: ["PIT", "CHA"], at: Self.time, device: device, history: .init(), pitchingTeam: team)
                    == .skip(.notFollowingBid))
        }
        // Named by the franchise's code, in any case: the same bid.
        var byCode = device
        byCode.channel = .liveActivity(
            token: "ab", environment: .sandbox, topic: "t",
            bid: ActivityBid(gameID: "CHA202008250", pitchingTeam: "cha"))
        #expect(
            Planner.decide(
                moment(.hitlessInnings, outs: 12), teams: ["PIT", "CHA"], at: Self.time, device: byCode,
                history: .init()) == .send(notBefore: later))
        // Without a bid: every bid past the threshold, the other game's too.
        var unbound = device
        unbound.channel = .liveActivity(token: "ab", environment: .sandbox, topic: "t")
        #expect(
            Planner.decide(
                others[0].0, teams: ["MIN", "MIL"], at: Self.time, device: unbound, history: .init(),
                pitchingTeam: "MIN") == .send(notBefore: later))
        #expect(ActivityBid(key: giolito.key) == giolito)
        #expect(ActivityBid(key: "CHA202008250") == nil && ActivityBid(key: "/CWS") == nil)
    }

    @Test func disabledDevicesAreSkipped() {
        var device = Device(id: UUID(), channel: .console(label: "x"), registeredAt: Self.time, secretHash: "")
        let moment = Moment(
            id: "m", gameID: "g", pitchingSide: .home, kind: .hitlessInnings, outs: 18, inning: 6, battingSide: .away,
            outsInInning: 3, score: PerSide(repeating: 0), perfect: true, pitchers: [])
        #expect(
            Planner.decide(moment, teams: [], at: Self.time, device: device, history: .init())
                == .send(notBefore: Self.time))
        device.status = .disabled(reason: "410", at: Self.time)
        #expect(
            Planner.decide(moment, teams: [], at: Self.time, device: device, history: .init()) == .skip(.deviceDisabled)
        )
    }

    @Test(
        arguments: [
            ({ @Sendable (p: inout Preferences) in p.thresholdInnings = 3 }, "threshold_innings"),
            ({ @Sendable (p: inout Preferences) in p.favouriteThresholdInnings = 10 }, "favourite_threshold_innings"),
            ({ @Sendable (p: inout Preferences) in p.spoilerDelaySeconds = 301 }, "spoiler_delay_seconds"),
            ({ @Sendable (p: inout Preferences) in p.favouriteTeams = ["CHICAGO"] }, "favourite_teams"),
            ({ @Sendable (p: inout Preferences) in p.favouriteTeams = ["XYZ"] }, "favourite_teams"),
            ({ @Sendable (p: inout Preferences) in p.favouriteTeams = ["nyy"] }, "favourite_teams"),
            (
                { @Sendable (p: inout Preferences) in p.quietHours = .init(start: 0, end: 1500, timeZone: "UTC") },
                "quiet_hours"
            ),
            (
                { @Sendable (p: inout Preferences) in p.quietHours = .init(start: 0, end: 60, timeZone: "Mars/Olympus")
                }, "quiet_hours.time_zone"
            ),
            ({ @Sendable (p: inout Preferences) in p.kinds = [] }, "kinds"),
            ({ @Sendable (p: inout Preferences) in p.kinds.insert(.finalScore) }, "kinds"),
            ({ @Sendable (p: inout Preferences) in p.teamNames = ["XYZ": "Zeds"] }, "team_names"),
            ({ @Sendable (p: inout Preferences) in p.teamNames = ["CWS": ""] }, "team_names.CWS"),
            (
                { @Sendable (p: inout Preferences) in p.teamNames = ["CWS": String(repeating: "x", count: 41)] },
                "team_names.CWS"
            ),
            ({ @Sendable (p: inout Preferences) in p.teamNames = ["CWS": "Sox\u{7}"] }, "team_names.CWS"),
            ({ @Sendable (p: inout Preferences) in p.minOdds = 0 }, "min_odds"),
            ({ @Sendable (p: inout Preferences) in p.minOdds = 1.5 }, "min_odds"),
            ({ @Sendable (p: inout Preferences) in p.minOdds = -0.25 }, "min_odds"),
            ({ @Sendable (p: inout Preferences) in p.minOdds = .nan }, "min_odds"),
        ] as [(@Sendable (inout Preferences) -> Void, String)])
    func invalidPreferencesNameTheField(change: @Sendable (inout Preferences) -> Void, field: String) {
        var preferences = Preferences()
        change(&preferences)
        #expect { try preferences.validated() } throws: { ($0 as? PreferencesError)?.field == field }
    }

    /// Quiet hours from a time until the same time are none; zones are IANA names (and UTC).
    @Test func quietHoursOfNoLengthAreOffAndZonesAreNames() throws {
        var preferences = Preferences()
        preferences.quietHours = .init(start: 60, end: 60, timeZone: "UTC")
        #expect(try preferences.validated().quietHours == nil)
        preferences.quietHours = .init(start: 60, end: 120, timeZone: "GMT+5")
        #expect { try preferences.validated() } throws: {
            ($0 as? PreferencesError)?.field == "quiet_hours.time_zone"
        }
        preferences.quietHours = .init(start: 60, end: 120, timeZone: "Asia/Kolkata")
        #expect(try preferences.validated().quietHours?.timeZone == "Asia/Kolkata")
    }

    /// Either code names a club (MLB's CWS, Retrosheet's CHA); kept as the games' code, once.
    @Test func validationNormalisesTeams() throws {
        var preferences = Preferences()
        preferences.favouriteTeams = ["PIT", "CWS", "CHA", "PIT", "NYY"]
        #expect(try preferences.validated().favouriteTeams == ["CHA", "NYA", "PIT"])
    }

    @Test func deliveryIDsAreVersion5UUIDs() {
        // RFC 9562, appendix A.4: the DNS namespace and "www.example.com".
        let dns = UUID(uuidString: "6ba7b810-9dad-11d1-80b4-00c04fd430c8")!
        #expect(
            UUID.version5(namespace: dns, name: "www.example.com").uuidString.lowercased()
                == "2ed6657d-e927-568b-95e1-2665a8aea6a2")
        let device = UUID()
        #expect(UUID.delivery(momentID: "m", deviceID: device) == UUID.delivery(momentID: "m", deviceID: device))
        #expect(UUID.delivery(momentID: "m", deviceID: device) != UUID.delivery(momentID: "n", deviceID: device))
        // Ids stored before the id text was made without Foundation are derived the same.
        #expect(
            UUID.delivery(momentID: "CHA202008250-home-completed-27", deviceID: dns).uuidString.lowercased()
                == UUID.version5(
                    namespace: .deliveryNamespace,
                    name: "CHA202008250-home-completed-27/6ba7b810-9dad-11d1-80b4-00c04fd430c8"
                ).uuidString.lowercased())
    }

    @Test func uuidTextIsFoundationsTextAndReadsBack() {
        for _ in 0..<1000 {
            let id = UUID()
            #expect(id.text(uppercase: true) == id.uuidString)
            #expect(id.text() == id.uuidString.lowercased())
            #expect(UUID(text: id.text()) == id)
            #expect(UUID(text: id.uuidString) == id)
            #expect(id.withText(uppercase: true) { String(decoding: $0, as: UTF8.self) } == id.uuidString)
        }
        let zero = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        #expect(zero.text() == "00000000-0000-0000-0000-000000000000")
        for bad in [
            "", "6ba7b810-9dad-11d1-80b4-00c04fd430c", "6ba7b810-9dad-11d1-80b4-00c04fd430c80",
            "6ba7b8109dad-11d1-80b4-00c04fd430c8a", "6ba7b810-9dad-11d1-80b4-00c04fd430cg",
            "6ba7b810-9dad-11d1-80b4_00c04fd430c8", "{6ba7b810-9dad-11d1-80b4-00c04fd430c8}",
        ] {
            #expect(UUID(text: bad) == nil, "\(bad)")
            #expect(UUID(uuidString: bad) == nil, "Foundation agrees on \(bad)")
        }
    }

    /// Score alerts read as a fan says them, in the device's own names for teams.
    @Test func scoreAlertsInWords() throws {
        let game = GameInfo(
            id: "CHA202008250", date: "2020-08-25",
            away: .init(club: TeamDirectory.club("PIT", on: "2020-08-25")!),
            home: .init(club: TeamDirectory.club("CHA", on: "2020-08-25")!))
        func moment(_ kind: Moment.Kind, inning: Int, away: Int, home: Int, side: Side = .home, outs: Int = 3) -> Moment
        {
            Moment(
                id: "m", gameID: game.id, pitchingSide: side.opponent, kind: kind, outs: 0, inning: inning,
                battingSide: side, outsInInning: outs, score: PerSide(away: away, home: home), perfect: false,
                pitchers: [])
        }
        let final = MessageText.render(moment(.finalScore, inning: 9, away: 0, home: 4), game: game)
        #expect(final.title == "Final: White Sox 4, Pirates 0")
        #expect(final.body == "The White Sox beat the Pirates 4-0.")
        #expect(final.bidKey == "CHA202008250-score")
        let extra = MessageText.render(moment(.finalScore, inning: 10, away: 5, home: 4), game: game)
        #expect(extra.title == "Final/10: Pirates 5, White Sox 4")
        #expect(extra.body == "The Pirates beat the White Sox 5-4 in 10 innings.")
        let named = MessageText.render(
            moment(.finalScore, inning: 9, away: 0, home: 4), game: game, teamNames: ["CHA": "Sox"])
        #expect(named.title == "Final: Sox 4, Pirates 0")
        let lead = MessageText.render(moment(.leadChange, inning: 8, away: 3, home: 4, outs: 1), game: game)
        #expect(lead.title == "White Sox lead 4-3")
        #expect(lead.body == "White Sox 4, Pirates 3, 1 out in the bottom of the 8th.")
        let start = MessageText.render(
            moment(.gameStart, inning: 1, away: 0, home: 0, side: .away, outs: 0), game: game)
        #expect(start.title == "Pirates at White Sox: first pitch")
    }
}
