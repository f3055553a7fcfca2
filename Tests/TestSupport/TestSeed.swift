import Foundation

/// The seed of a test's random kill or fault points: `NOHIT_TEST_SEED` when set, to replay a
/// failure whose seed a run printed, or a fresh one.
package enum TestSeed {
    package static func draw() -> UInt64 {
        if let text = ProcessInfo.processInfo.environment["NOHIT_TEST_SEED"], let seed = UInt64(text) {
            return seed
        }
        return UInt64.random(in: 1...UInt64.max)
    }
}
