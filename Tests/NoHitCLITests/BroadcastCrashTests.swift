import Alerts
import Foundation
import Storage
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Broadcast channels across a `kill -9`: `nohit replay` is killed after APNs made a channel and
/// before the service learned its id (the fake makes it and never answers), so only the intent
/// written before the request says a channel may exist. Started again, the replay's sweeps find
/// the channel no row keeps, delete it at the second listing, and end the intent; the day's own
/// channels are deleted once their games are over, so none is left on APNs.
@Suite(.serialized, .ownThreads) struct BroadcastCrashTests {
    @Test func aChannelMadeAsTheProcessWasKilledIsDeletedAfterARestart() async throws {
        // Phones that follow bids from the 6th inning at three delays: Giolito's bid makes three
        // channels; the first is the one the kill catches.
        let harness = try await CrashRecoveryTests.Harness(devices: [
            ["--count", "2", "--threshold", "6", "--seed", "11"],
            ["--count", "2", "--threshold", "6", "--spoiler-delay", "45", "--seed", "12"],
            ["--count", "2", "--threshold", "6", "--spoiler-delay", "300", "--seed", "13"],
        ])
        let state = harness.server.state
        state.stallChannelAnswers(true)
        let (process, log) = try harness.startReplay()
        while state.channelCounts.created == 0 && process.isRunning {
            try await Task.sleep(for: .milliseconds(2))
        }
        try #require(process.isRunning, "replay ended before a channel was made: \(CrashRecoveryTests.log(log))")
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        #expect(process.terminationReason == .uncaughtSignal)
        // APNs holds a channel the service never learned of; the database only the intent.
        let leaked = state.channelCounts
        #expect(leaked.open >= 1)
        let rows = try await SQLiteStore(path: harness.database).activeDevices().filter {
            $0.channel.kind == .liveActivityChannel
        }
        #expect(
            rows.contains {
                if case .liveActivityChannel(let id, _, _, _) = $0.channel { return BroadcastChannelPlan.isIntent(id) }
                return false
            }, "the intent written before asking APNs")

        state.stallChannelAnswers(false)
        let (again, againLog) = try harness.startReplay()
        again.waitUntilExit()
        let output = CrashRecoveryTests.log(againLog)
        #expect(again.terminationStatus == 0, "\(output)")
        let after = state.channelCounts
        print(
            "broadcast crash test: \(leaked.open) channel(s) on APNs at the kill; after the restart \(after.created) "
                + "made in all, \(after.deleted) deleted, \(after.open) left")
        // Nothing left on APNs: the leaked channel and the day's own.
        #expect(after.open == 0)
        #expect(after.created > leaked.created, "the day's channels made again after the restart")
        // Every channel row ended: none kept, no intent left.
        let left = try await SQLiteStore(path: harness.database).activeDevices().filter {
            $0.channel.kind == .liveActivityChannel
        }
        #expect(left.isEmpty, "\(left.map(\.channel))")
        try await harness.shutdown()
    }
}
