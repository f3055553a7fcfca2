import Foundation

/// Wall time that never steps: the system's wall time when the clock was made, advanced by
/// CLOCK_BOOTTIME since (the monotonic clock, counting time the machine was suspended). What the service measures with it — when a retry is due, when an alert
/// goes stale, how far a replayed day has played, a client's rate — is unchanged when the system's
/// clock is stepped (by hand, or by an NTP daemon correcting a large error); NTP's gradual
/// corrections slew the monotonic clock too, so it keeps pace with the system's between steps.
///
/// After a step the two differ by it until the process restarts (`systemOffset`, the metric
/// `nohit_clock_step_seconds`). What must be the true time of day for somebody else is taken from
/// the system's clock instead: APNs' and Web Push's token times, a webhook's signature time, an
/// analytics event's timestamp.
package struct SteadyWallClock: WallClock {
    /// The process's steady clock, made at its first use (the service's start).
    package static let process = SteadyWallClock()

    private let anchorWall: Date
    private let anchorMonotonic: Int64
    private let wall: @Sendable () -> Date
    private let monotonic: @Sendable () -> Int64

    /// `wall` and `monotonic` are the system's clocks (tests give their own, to step one).
    package init(
        wall: @escaping @Sendable () -> Date = { Date() },
        monotonic: @escaping @Sendable () -> Int64 = { MonotonicClock.bootNanoseconds() }
    ) {
        self.wall = wall
        self.monotonic = monotonic
        anchorWall = wall()
        anchorMonotonic = monotonic()
    }

    package func now() -> Date {
        anchorWall.addingTimeInterval(Double(monotonic() - anchorMonotonic) / 1e9)
    }

    /// Waits (`Task.sleep`, on the continuous clock) for as long as `date` is ahead of `now()`.
    package func sleep(until date: Date) async throws {
        let interval = date.timeIntervalSince(now())
        if interval > 0 { try await Task.sleep(for: .seconds(interval)) }
    }

    /// The system's wall clock less this one, in seconds: the sum of its steps since this clock was
    /// made (0 on a machine whose clock was never stepped).
    package var systemOffset: TimeInterval { wall().timeIntervalSince(now()) }
}
