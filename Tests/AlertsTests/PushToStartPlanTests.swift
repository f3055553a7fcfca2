import Alerts
import Foundation
import Testing

/// When a push-to-start token gets a start (once per bid, at the moment the app's Live Activity
/// would first hear of it, by a moment that makes it a follower), and when a device's start budget
/// lets one go.
@Suite struct PushToStartPlanTests {
    typealias Plan = BroadcastChannelPlanTests
    static let teams = ["PIT", "CHA"]

    static func starter(_ updates: ActivityUpdates = .channel, delay: Int = 0, innings: Int = 6) -> Device {
        Plan.device(
            .liveActivityStart(token: "ab", environment: .production, topic: "com.example.app", updates: updates),
            delay: delay, innings: innings)
    }

    static func decide(_ moment: Moment, _ device: Device, followed: Bool = false) -> PlanDecision {
        Planner.decide(
            moment, teams: teams, at: Plan.time, device: device, history: DeviceBidHistory(progressSent: followed))
    }

    @Test func aStartGoesOncePerBidPastTheThresholdWhileTheBidIsOn() {
        let device = Self.starter(delay: 45)
        // Below the threshold: nothing; at it: the start, at the device's delay.
        #expect(Self.decide(Plan.moment(.hitlessInnings, outs: 15), device) == .skip(.belowThreshold))
        #expect(
            Self.decide(Plan.moment(.hitlessInnings, outs: 18), device)
                == .send(notBefore: Plan.time.addingTimeInterval(45)))
        // Started already (a follower): never again; what follows reaches the activity elsewhere.
        #expect(Self.decide(Plan.moment(.hitlessInnings, outs: 21), device, followed: true) == .skip(.frequency))
        #expect(Self.decide(Plan.moment(.ninthInningOut, outs: 25), device, followed: true) == .skip(.frequency))
        // An ending, a pitching change (no follower is recorded for it), a score, a deal: no start.
        #expect(Self.decide(Plan.moment(.brokenUp, outs: 22), device) == .skip(.notFollowingBid))
        #expect(Self.decide(Plan.moment(.completed, outs: 27), device) == .skip(.notFollowingBid))
        #expect(Self.decide(Plan.moment(.pitchingChange, outs: 20), device) == .skip(.notFollowingBid))
        #expect(Self.decide(Plan.moment(.finalScore, outs: 27), device) == .skip(.kindNotWanted))
        // A device past its threshold only in the 9th starts there.
        let late = Self.starter(innings: 9)
        #expect(Self.decide(Plan.moment(.hitlessInnings, outs: 24), late) == .skip(.belowThreshold))
        // Quiet hours hold alerts, not the lock screen.
        var quiet = Self.starter()
        quiet.preferences.quietHours = .init(start: 0, end: 24 * 60 - 1, timeZone: "UTC")
        #expect(Self.decide(Plan.moment(.hitlessInnings, outs: 18), quiet) == .send(notBefore: Plan.time))
    }

    @Test func aStartOnAChannelMakesTheChannelWantedAndOneByTokenDoesNot() {
        let moment = Plan.moment(.hitlessInnings, outs: 18)
        let onChannel = BroadcastChannelPlan.wanted(
            moment, teams: Self.teams, at: Plan.time, devices: [Self.starter(delay: 100)])
        #expect(
            onChannel == [
                .init(bid: "CHA202008250-home", topic: "com.example.app", environment: .production, delay: 120)
            ])
        #expect(
            BroadcastChannelPlan.wanted(moment, teams: Self.teams, at: Plan.time, devices: [Self.starter(.token)])
                .isEmpty)
    }

    @Test func theBudgetLetsAStartGoAtTheFirstTimeItAllows() {
        let budget = StartBudget(starts: 2, window: 3600)
        let t0 = Plan.time
        func at(_ minutes: Double) -> Date { t0.addingTimeInterval(minutes * 60) }
        // Room: at once.
        #expect(budget.slot(wanted: t0, planned: []) == t0)
        #expect(budget.slot(wanted: t0, planned: [at(-30)]) == t0)
        // Two in the last hour: when the first of them is an hour old.
        #expect(budget.slot(wanted: t0, planned: [at(-50), at(-10)]) == at(10))
        // Starts planned later count too: no window of an hour ever holds three.
        let slot = budget.slot(wanted: t0, planned: [at(-50), at(20)])
        #expect(slot == at(10))
        let all = [at(-50), at(20), slot].sorted()
        for start in all {
            #expect(all.filter { $0 >= start && $0.timeIntervalSince(start) < 3600 }.count <= 2)
        }
        // Long past: no longer counted.
        #expect(budget.slot(wanted: t0, planned: [at(-120), at(-61)]) == t0)
        // No budget at all: never.
        #expect(StartBudget(starts: 0).slot(wanted: t0, planned: []) == .distantFuture)
    }
}
