import Foundation
import TestSupport
import Testing

/// The traits that keep long tests off Swift's cooperative threads really move them.
@Suite struct TestThreadsTests {
    static func threadName() -> String { TestThreads.currentExecutor ?? "" }

    @Test(.ownThreads) func aTestWithItsOwnThreadsRunsOnThem() async {
        #expect(Self.threadName() == "test")
        // A child task inherits the preference.
        async let structured = Self.threadName()
        #expect(await structured == "test")
    }

    @Test(.heavy) func aHeavyTestRunsOnTheSharedThreads() {
        #expect(Self.threadName() == "heavy")
    }

    @Test func otherTestsStayOnTheCooperativeThreads() {
        #expect(Self.threadName() != "test")
        #expect(Self.threadName() != "heavy")
    }
}
