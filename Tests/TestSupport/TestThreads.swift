import Foundation
import Testing

/// Swift Testing runs every test as a task on Swift's cooperative threads: two on a two-core
/// machine. A test that holds one for minutes (parsing seasons, waiting for a process) leaves the
/// tests beside it waiting for a thread: their sockets, deadlines and time limits stall behind it.
/// These traits give such tests threads of their own, so only the kernel shares the cores.
extension Trait where Self == TestThreads {
    /// Each test case runs on threads of its own (for tests that wait: for processes, pipes), and
    /// at most three such test cases run at once: each starts servers, replays and browsers of its
    /// own. Measured in CI-like runs (2026-12-02): three used about one core of two (20-36
    /// CPU-seconds each 30 s), the job beside the tests (every season, fuzzing) the other; with four,
    /// the run was no shorter (the machine was as busy) and the longest cases ran twice as long
    /// (a day of faults 384 s instead of 214), closer to their bounds on a slower machine.
    package static var ownThreads: Self { TestThreads(kind: .own) }

    /// ``ownThreads``, and first in line: on a serialized suite whose test cases are the run's
    /// longest line (the instances' paced days, one after the other), the suite takes one turn
    /// before those waiting and holds it for all its test cases, so that the line starts at once
    /// instead of behind the rest and ending the run late.
    package static var ownThreadsFirstInLine: Self { TestThreads(kind: .own, firstInLine: true) }

    /// ``ownThreads`` for a test case that drives a browser (headless Chromium, which watches a paced
    /// replay and misses its moment when it starts slowly): at most ``TestThreads/browsers`` of them
    /// at once, whichever suite they are in, so that the browser tests spread over the turns instead
    /// of waiting in a serialized chain of their own.
    package static var ownThreadsAndABrowser: Self { TestThreads(kind: .own, browser: true) }

    /// Test cases share a few threads of their own, as many as the machine has cores (for tests
    /// that compute for long: a season parsed, every game replayed). They queue for those threads
    /// among themselves, never for the cooperative threads the other tests need.
    package static var heavy: Self { TestThreads(kind: .heavy) }
}

/// See ``Trait/ownThreads`` and ``Trait/heavy``.
package struct TestThreads: TestTrait, SuiteTrait, TestScoping {
    package enum Kind: Sendable { case own, heavy }
    package var kind: Kind
    package var firstInLine = false
    package var browser = false

    static func seconds(_ duration: Duration) -> String {
        (Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18)
            .formatted(.number.precision(.fractionLength(1))) + " s"
    }

    /// The executor the heavy test cases share.
    static let shared = ThreadExecutor(threads: ProcessInfo.processInfo.activeProcessorCount, name: "heavy")
    /// Turns for the test cases with threads of their own.
    static let turns = Turns(3)
    /// Browsers at once (``Trait/ownThreadsAndABrowser``), taken before a turn, so that a test case
    /// waiting for a browser holds no turn. A browser test is light (the thirteen, two at a time,
    /// used 147 CPU-seconds in 548 s; 338 s three at a time), but a slow start under load costs it
    /// the moment it watches: two, as the two serialized chains allowed before.
    static let browsers = Turns(2)

    /// The name of the executor whose thread this is ("test", "heavy"), if any.
    package static var currentExecutor: String? { Thread.current.threadDictionary[ThreadExecutor.key] as? String }

    package var isRecursive: Bool { true }

    /// Only a test case (the body that runs) gets the threads, not the suite or test around it;
    /// a suite first in line takes one turn for all its test cases (see ``provideScope``).
    package func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        testCase != nil || (firstInLine && test.isSuite) ? self : nil
    }

    /// Set while a suite first in line holds its turn for its test cases.
    @TaskLocal static var suiteHoldsTurn = false

    package func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        switch kind {
        case .heavy:
            try await withTaskExecutorPreference(Self.shared) { try await function() }
        case .own where testCase == nil:
            // A serialized suite first in line: its test cases one after the other in one turn, so
            // that no other test takes it between two of them (each given back, the turn went to
            // the next waiting before the suite's next case asked).
            try await Executable.productsBuilt()
            let asked = ContinuousClock.now
            await Self.turns.take(firstInLine: true)
            let taken = ContinuousClock.now
            defer {
                Task { await Self.turns.give() }
                let held = ContinuousClock.now - taken
                print("suite's turn: \(test.name) waited \(Self.seconds(taken - asked)), held \(Self.seconds(held))")
            }
            try await Self.$suiteHoldsTurn.withValue(true) { try await function() }
        case .own:
            // Those that start nohit: CI may still be building it (``Executable/productsBuilt()``).
            try await Executable.productsBuilt()
            let asked = ContinuousClock.now
            if browser { await Self.browsers.take() }
            defer { if browser { Task { await Self.browsers.give() } } }
            let own = !Self.suiteHoldsTurn
            if own { await Self.turns.take(firstInLine: firstInLine) }
            let taken = ContinuousClock.now
            // Four: a test may block one on a process while its own servers answer on the others.
            let executor = ThreadExecutor(threads: 4, name: "test")
            defer {
                executor.shutdown()
                if own { Task { await Self.turns.give() } }
                // What the run's length is made of: these test cases take their turns in line (the
                // longest first made the heaviest overlap, and more tests late under load).
                let held = ContinuousClock.now - taken
                print("turn: \(test.name) waited \(Self.seconds(taken - asked)), held \(Self.seconds(held))")
            }
            try await withTaskExecutorPreference(executor) { try await function() }
        }
    }
}

/// A task executor with threads of its own that run its jobs first come, first served. After
/// ``shutdown()`` its threads end once the queue is empty, and a job that still comes (an
/// unstructured task that inherited the preference) goes to the global executor.
package final class ThreadExecutor: TaskExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var head = 0
    private var stopped = false
    static let key = "nohit.test-executor"

    package init(threads: Int, name: String) {
        for index in 0..<max(1, threads) {
            Thread.detachNewThread { [self] in
                Thread.current.threadDictionary[Self.key] = name
                Thread.current.name = "\(name)-\(index)"
                work()
            }
        }
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        condition.lock()
        if stopped {
            condition.unlock()
            globalConcurrentExecutor.enqueue(job)
            return
        }
        jobs.append(UnownedJob(job))
        condition.signal()
        condition.unlock()
    }

    package func shutdown() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }

    private func work() {
        while true {
            condition.lock()
            while head == jobs.count && !stopped { condition.wait() }
            if head == jobs.count {
                condition.unlock()
                return
            }
            let job = jobs[head]
            head += 1
            if head > 1024 && head * 2 > jobs.count {
                jobs.removeFirst(head)
                head = 0
            }
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}

/// A number of turns that tasks wait for without holding a thread, in line: those first in line
/// before the others, each line first come, first served.
actor Turns {
    private var free: Int
    private var first: [CheckedContinuation<Void, Never>] = []
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(_ count: Int) { free = count }

    func take(firstInLine: Bool = false) async {
        if free > 0 {
            free -= 1
            return
        }
        await withCheckedContinuation {
            if firstInLine { first.append($0) } else { waiting.append($0) }
        }
    }

    func give() {
        if !first.isEmpty {
            first.removeFirst().resume()
        } else if !waiting.isEmpty {
            waiting.removeFirst().resume()
        } else {
            free += 1
        }
    }
}
