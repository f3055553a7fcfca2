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

    /// A long test case that waits takes the next turn before a short one that waited longer.
    @Test func aLongTestCaseWaitingGoesBeforeTheShortOnes() async {
        let turns = Turns(1)
        await turns.take()
        actor Order {
            var names: [String] = []
            func append(_ name: String) { names.append(name) }
        }
        let order = Order()
        await withTaskGroup(of: Void.self) { group in
            for (name, long) in [("short 1", false), ("short 2", false), ("long", true)] {
                group.addTask {
                    await turns.take(first: long)
                    await order.append(name)
                    await turns.give()
                }
                // Each is in line before the next asks.
                while await turns.waitingCount < (long ? 3 : name == "short 1" ? 1 : 2) { await Task.yield() }
            }
            await turns.give()
        }
        #expect(await order.names == ["long", "short 1", "short 2"])
    }
}
