import Clocks
import Foundation
import Synchronization
import Testing

/// Steps of the system's clock (issue 57, item 3): the service's clock (``SteadyWallClock``: due
/// times, staleness, the Stats API poller's waits) and a replayed day's (``ScaledWallClock`` on it)
/// run on the monotonic clock, so a step of an hour either way moves no retry, no alert's expiry
/// and no replay position; the step is seen (`systemOffset`, the metric `nohit_clock_step_seconds`).
@Suite struct ClockStepTests {
    /// A system whose wall clock the test steps and whose monotonic clock it advances.
    final class System: Sendable {
        let wall = Mutex(Date(timeIntervalSince1970: 1_598_371_200))
        let monotonic = Mutex<Int64>(5_000_000_000)

        func advance(_ seconds: Double) {
            wall.withLock { $0 = $0.addingTimeInterval(seconds) }
            monotonic.withLock { $0 += Int64(seconds * 1e9) }
        }

        func step(_ seconds: Double) { wall.withLock { $0 = $0.addingTimeInterval(seconds) } }

        var clock: SteadyWallClock {
            SteadyWallClock(wall: { self.wall.withLock { $0 } }, monotonic: { self.monotonic.withLock { $0 } })
        }
    }

    @Test(arguments: [3600.0, -3600.0])
    func aStepOfTheSystemClockMovesNeitherTheServiceClockNorAReplay(step: Double) {
        let system = System()
        let steady = system.clock
        let start = steady.now()
        let virtualStart = Date(timeIntervalSince1970: 1_598_380_000)
        let replay = ScaledWallClock(virtualStart: virtualStart, speed: 60, base: steady)
        // A retry due 30 s from now, an alert stale 10 minutes from now.
        let retry = start.addingTimeInterval(30)
        let stale = start.addingTimeInterval(600)

        system.advance(10)
        system.step(step)
        system.advance(10)
        #expect(steady.now() == start.addingTimeInterval(20))
        #expect(steady.systemOffset == step)
        #expect(retry.timeIntervalSince(steady.now()) == 10)
        #expect(steady.now() < stale)
        // 20 s of real time at 60x: 20 minutes of the day, whatever the system's clock says.
        #expect(replay.now() == virtualStart.addingTimeInterval(1200))
    }

    @Test func sleepingWaitsOnTheMonotonicClockAfterAStep() async throws {
        let system = System()
        let steady = system.clock
        let due = steady.now().addingTimeInterval(0.05)
        // Stepped back an hour: a wall-clock sleep would wait an hour and 50 ms.
        system.step(-3600)
        let started = ContinuousClock.now
        try await steady.sleep(until: due)
        // (Not the hour: a loaded machine may wake it late, by seconds.)
        #expect(ContinuousClock.now - started < .seconds(600))
        // The process's own clock agrees with the system's until it is stepped.
        #expect(abs(SteadyWallClock.process.systemOffset) < 1)
    }
}
