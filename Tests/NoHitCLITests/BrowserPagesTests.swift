import Foundation
import TestSupport
import Testing

/// The pages' browser tests (`BrowserTests` says how they run: at most two browsers at once, taken
/// by the test cases of both suites as they come).
@Suite(.ownThreadsAndABrowser) struct BrowserPagesTests {
    /// The Scores page and a game page during a fast replay (200 times real speed: Giolito's game
    /// is under way with its no-hitter mark for about 30 seconds, room for a loaded machine's slow
    /// browser start), desktop light and phone dark
    /// (`Tests/Browser/scores_page.py` says what it checks).
    @Test(
        .enabled(if: BrowserTests.chromium != nil, "needs chromium (apt-get install -y chromium); .ci/run installs it"))
    func scoresPageAndGamePageDuringAReplay() async throws {
        let (status, text) = try await Executable.onThread {
            try BrowserTests.probe("scores_page.py", speed: 200, arguments: [BrowserTests.output.path, "150"])
        }
        #expect(status == 0, "\(text)")
        #expect(text.contains("scores page: every check held"))
        for name in ["scores-desktop-light-live.png", "game-page-final.png", "scores-phone-dark-final.png"] {
            #expect(
                FileManager.default.fileExists(atPath: BrowserTests.output.appendingPathComponent(name).path), "\(name)"
            )
        }
    }

    /// A spoiler delay set in Settings on a 390-pixel phone during a replay at 60x: the page says it
    /// is 60 s behind, loads the games, moments and stream with the delay, is never further on than
    /// the live API, and is live again at 0 (`Tests/Browser/delay_page.py`).
    @Test(
        .enabled(if: BrowserTests.chromium != nil, "needs chromium (apt-get install -y chromium); .ci/run installs it"))
    func spoilerDelayHoldsThePageBack() async throws {
        let (status, text) = try await Executable.onThread {
            try BrowserTests.probe("delay_page.py", speed: 60, arguments: [BrowserTests.output.path, "90"])
        }
        #expect(status == 0, "\(text)")
        #expect(text.contains("delay page: every check held"))
        #expect(
            FileManager.default.fileExists(
                atPath: BrowserTests.output.appendingPathComponent("delay-live-phone.png").path))
    }

    /// ABS challenges at 390 px from `fake-statsapi --abs` through `serve --source statsapi`: the
    /// board's cards, the widget and a game page say each team's challenges left as the feed
    /// counts them, and every challenged pitch, in agreement (`Tests/Browser/abs_page.py`).
    @Test(
        .enabled(if: BrowserTests.chromium != nil, "needs chromium (apt-get install -y chromium); .ci/run installs it"))
    func absChallengesOnThePhone() async throws {
        let (status, text) = try await Executable.onThread {
            try BrowserTests.probe(
                "abs_page.py", speed: 0, arguments: [BrowserTests.output.path, "120"], statsAPI: true,
                fakeArguments: ["--abs", "7"])
        }
        #expect(status == 0, "\(text)")
        #expect(text.contains("abs page: every check held"))
        for name in ["abs-board-phone-light.png", "abs-game-page-phone-light.png", "abs-game-page-phone-dark.png"] {
            #expect(
                FileManager.default.fileExists(atPath: BrowserTests.output.appendingPathComponent(name).path), "\(name)"
            )
        }
    }

    /// The Deals page on 2020-08-24 (the day after the Nationals scored 9 in a win): a big YES for
    /// Papa John's with the game and the window, the charts by month and by franchise, Settings'
    /// subscriptions; desktop light and phone dark (`Tests/Browser/deals_page.py`).
    @Test(
        .enabled(if: BrowserTests.chromium != nil, "needs chromium (apt-get install -y chromium); .ci/run installs it"))
    func dealsPageAnswersTodayAndChartsTheSeason() async throws {
        let (status, text) = try await Executable.onThread {
            try BrowserTests.probe(
                "deals_page.py", speed: 60, day: "2020-08-24", arguments: [BrowserTests.output.path, "90"])
        }
        #expect(status == 0, "\(text)")
        #expect(text.contains("deals page: every check held"))
        for name in ["deals-desktop-light.png", "deals-phone-dark.png"] {
            #expect(
                FileManager.default.fileExists(atPath: BrowserTests.output.appendingPathComponent(name).path), "\(name)"
            )
        }
    }

    /// The attempt card through Giolito's no-hitter to its celebration, with his line, and
    /// Javier's broken-up bid kept on the page in words (`Tests/Browser/attempt_card.py`).
    @Test(
        .enabled(if: BrowserTests.chromium != nil, "needs chromium (apt-get install -y chromium); .ci/run installs it"))
    func attemptCardThroughANoHitterAndABrokenUpBid() async throws {
        let (status, text) = try await Executable.onThread {
            try BrowserTests.probe("attempt_card.py", speed: 300, arguments: [BrowserTests.output.path, "150"])
        }
        #expect(status == 0, "\(text)")
        #expect(text.contains("attempt card: every check held"))
        for name in ["attempt-card-alive.png", "attempt-card-celebration.png", "attempt-card-broken-up.png"] {
            #expect(
                FileManager.default.fileExists(atPath: BrowserTests.output.appendingPathComponent(name).path), "\(name)"
            )
        }
    }

    /// The bid a fan trusts, at 390 px then 1280 px, in both modes: batter, count and pitch count
    /// moving pitch by pitch on the card, one odds figure, Live ordered by chance, Javier's 7-inning
    /// bid saying it won't count, each moment announced once; the Hall of Fame readable at 390 px
    /// and every Deals NO with its reason (`Tests/Browser/bid_card.py`). The replay at 200 times
    /// real speed (Giolito's bid lasts about 25 s); MLB's feed at 100 (a plate appearance lasts
    /// a few of its polls and pushes).
    @Test(
        .enabled(if: BrowserTests.chromium != nil, "needs chromium (apt-get install -y chromium); .ci/run installs it"),
        arguments: [false, true])
    func theBidCardPitchByPitchInBothModes(statsAPI: Bool) async throws {
        let mode = statsAPI ? "statsapi" : "replay"
        let (status, text) = try await Executable.onThread {
            try BrowserTests.probe(
                "bid_card.py", speed: statsAPI ? 100 : 200, arguments: [BrowserTests.output.path, "300", mode],
                statsAPI: statsAPI)
        }
        #expect(status == 0, "\(text)")
        #expect(text.contains("bid card (\(mode)): every check held"))
    }

    /// axe-core on every page, light and dark, desktop and phone (no serious or critical
    /// violation), and Settings saved without push by keyboard alone
    /// (`Tests/Browser/accessibility.py`).
    @Test(
        .enabled(if: BrowserTests.chromium != nil, "needs chromium (apt-get install -y chromium); .ci/run installs it"),
        .enabled(if: BrowserTests.axe != nil, "needs axe-core: run Tests/Browser/get-axe (.ci/run does)"))
    func everyPagePassesAxeAndSettingsWorkByKeyboard() async throws {
        let (status, text) = try await Executable.onThread {
            try BrowserTests.probe(
                "accessibility.py", speed: 60, arguments: [BrowserTests.output.path, BrowserTests.axe ?? "", "90"])
        }
        #expect(status == 0, "\(text)")
        #expect(text.contains("accessibility: every check held"))
    }

    /// Live all night during a fast replay of 2020-08-25 (300 times real speed: the evening, with
    /// games under way and Giolito's to come, lasts about 40 seconds from about a minute in, room
    /// for a loaded machine's slow browser start; the night about two minutes):
    /// every game in progress and coming up, the Hall of Fame without Giolito's no-hitter before its
    /// first pitch, the night's longest bid, and the notice when the server starts the day again
    /// (`Tests/Browser/live_night.py`).
    @Test(
        .enabled(if: BrowserTests.chromium != nil, "needs chromium (apt-get install -y chromium); .ci/run installs it"))
    func liveAllNight() async throws {
        let (status, text) = try await Executable.onThread {
            try BrowserTests.probe("live_night.py", speed: 300, arguments: [BrowserTests.output.path, "240"])
        }
        #expect(status == 0, "\(text)")
        #expect(text.contains("live night: every check held"))
    }
}
