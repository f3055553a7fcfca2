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

/// A seeded generator (SplitMix64): the same seed draws the same numbers, so a run's random
/// points can be drawn again from its seed.
package struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    package init(seed: UInt64) { state = seed }
    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE5_E9B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
