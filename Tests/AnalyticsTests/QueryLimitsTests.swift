import Foundation
import JSON
import Synchronization
import Testing

@testable import Analytics

/// What keeps one query from taking the server: numbers in range, a regex in linear time, a
/// budget of time and memory checked inside the scan.
@Suite struct QueryLimitsTests {
    /// Every numeric parameter is read into a checked range: huge, fractional, infinite and
    /// negative values are Keen's 400 naming the parameter (on main at 953a705, `latest=1e19`
    /// trapped the process on conversion).
    @Test(arguments: [
        ("extraction", "latest", "1e19", "QueryTooLargeError"),
        ("extraction", "latest", "9223372036854775808", "QueryTooLargeError"),
        ("extraction", "latest", "1000000000", "QueryTooLargeError"),
        ("extraction", "latest", "-1", "InvalidParameterError"),
        ("extraction", "latest", "2.5", "InvalidParameterError"),
        ("extraction", "latest", "inf", "InvalidParameterError"),
        ("extraction", "latest", "nan", "InvalidParameterError"),
        ("count", "limit", "1e19", "InvalidParameterError"),
        ("count", "limit", "-9223372036854775809", "InvalidParameterError"),
        ("count", "max_age", "1e300", "InvalidParameterError"),
        ("percentile", "percentile", "1e19", "MissingRequiredPropertyError"),
        ("count", "timezone", "1e19", "InvalidTimezoneError"),
        ("count", "interval", "every_9223372036854775807_weeks", "IntervalDefinitionError"),
        ("count", "interval", "every_100001_days", "IntervalDefinitionError"),
    ])
    func numbersOutOfRangeAreKeensErrors(_ analysis: String, _ name: String, _ value: String, _ code: String) throws {
        var items: [(name: String, value: String)] = [
            ("event_collection", "views"), ("target_property", "n"), (name, value),
        ]
        if name == "limit" { items += [("group_by", "tab"), ("order_by", #""result""#)] }
        if name == "interval" { items.append(("timeframe", "this_7_days")) }
        let parameters = try KeenQuery.parameters(fromQuery: items)
        #expect {
            _ = try KeenQuery.parse(analysis, parameters: parameters, now: 1_795_530_600_000_000)
        } throws: { error in
            (error as? KeenError)?.code == code && (error as? KeenError)?.status == 400
        }
    }

    /// An interval of a huge count over a long timeframe ends in Keen's error, never in an
    /// overflow: the bucket count is bounded and dates far away saturate.
    @Test func longIntervalsStopAtTheBucketLimit() throws {
        let parameters = try KeenQuery.parameters(fromQuery: [
            ("event_collection", "views"), ("interval", "every_100000_years"),
            ("timeframe", #"{"start":"0001-01-01T00:00:00Z","end":"9999-01-01T00:00:00Z"}"#),
        ])
        let query = try KeenQuery.parse("count", parameters: parameters, now: 1_795_530_600_000_000)
        var events = MemoryEvents()
        try events.add("views", ["n": 1], now: 1_795_530_600_000_000)
        let result = try QueryEngine.run(query, on: events)
        #expect(result.array?.count == 1)
        #expect(result.array?.first?["value"] == .number(1))
    }

    /// The linear-time matcher agrees with a backtracking engine (Foundation's) on what it
    /// supports.
    @Test func theLinearRegexAgreesWithFoundation() throws {
        let patterns = [
            "abc", "^abc", "abc$", "a.c", "a*b", "a+b", "a?b", "colou?r", "(ab)+", "(?:ab|cd)+e", "^(a|b)*c$",
            "[a-c]+", "[^a-c]+$", "\\d{3}-\\d{4}", "\\w+@\\w+\\.com", "\\s", "^\\S+$", "x{2,3}", "x{2,}", "^x{0,1}y",
            "\\bcat\\b", "\\Bcat", "[\\d\\s]+", "[-a]", "[a-]", "[\\]]", "ios|android", "^$", "(?i)HeLLo",
            "^[[:alpha:]]+$", "\\.", "a|", "(a|)b", "café", "\\x41", "\\u00e9", "^.*$", "\\Aab\\z", "ab\\Z",
            "(?<year>\\d{4})-(\\d{2})", "[^\\W\\d]+", "a{0}b",
            // Past the sets given ASCII bits (a counted repetition writes its set out each time).
            "(?i)^[a-c]{70}$", "^[^x]{66}y",
        ]
        let texts = [
            "", "abc", "xabcx", "ab", "aab", "b", "color", "colour", "ababab", "abcde", "cdabe", "aabbc", "abcd",
            "555-1234", "me@example.com", "a b", "nospace", "xx", "xxx", "y", "xy", "the cat sat", "concat", "12 34",
            "-", "]", "ios", "android 14", "HELLO", "hello", "Hello world", "abcé", "café", "A", "é", "ab\n",
            "line\nbreak", "2026-11", "déjà vu", String(repeating: "A", count: 70), String(repeating: "b", count: 69),
            String(repeating: "z", count: 66) + "y", String(repeating: "z", count: 65) + "xy",
        ]
        for pattern in patterns {
            let linear = try LinearRegex(pattern)
            let foundation = try NSRegularExpression(pattern: pattern)
            for text in texts {
                let expected = foundation.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
                #expect(linear.matches(text) == expected, "/\(pattern)/ on \(text.debugDescription)")
            }
        }
    }

    /// What needs backtracking is refused when the filter is read, saying why.
    @Test(arguments: [
        "(a)\\1", "a(?=b)", "a(?!b)", "(?<=a)b", "(?<!a)b", "a*+", "(?>a)", "(", "a)", "*a", "[a", "a{3,2}",
    ])
    func patternsThatNeedBacktrackingAreRefused(_ pattern: String) throws {
        #expect(throws: RegexError.self) { try LinearRegex(pattern) }
        let filters: JSONValue = [["property_name": "a", "operator": "regex", "property_value": .string(pattern)]]
        #expect {
            _ = try KeenFilter.parseList(filters)
        } throws: { error in
            (error as? KeenError)?.code == "FilterDefinitionError"
        }
    }

    /// `^(a+)+$` on thirty a's and a b: exponential for a backtracking engine, linear here.
    @Test func anEvilPatternTakesLinearTime() throws {
        let regex = try LinearRegex("^(a+)+$")
        let text = String(repeating: "a", count: 10_000) + "b"
        var steps = 0
        #expect(!regex.matcher().matches(text, steps: &steps))
        // A handful of states per character.
        #expect(steps < 30 * text.count)
    }

    /// A query past its deadline stops inside the scan with Keen's 504; one cancelled stops with
    /// 503; one holding more state than its memory budget stops with a 400.
    @Test func theBudgetStopsAQueryInsideItsScan() throws {
        var events = MemoryEvents()
        let start: Int64 = 1_795_530_600_000_000
        try events.add(
            "views", (0..<200_000).map { ["user": .string("u\($0)"), "n": .number(Double($0))] }, now: start)
        let parameters = try KeenQuery.parameters(fromQuery: [
            ("event_collection", "views"), ("target_property", "user"),
        ])
        let query = try KeenQuery.parse("count_unique", parameters: parameters, now: start)
        #expect(try QueryEngine.run(query, on: events) == .number(200_000))

        // The clock passes the deadline after the first check: the scan stops part-way.
        let ticks = Counter()
        let late = QueryBudget(seconds: 1, memoryLimit: .max) { ticks.next() * 2_000_000_000 }
        #expect {
            _ = try QueryEngine.run(query, on: events, budget: late)
        } throws: { error in
            (error as? KeenError)?.status == 504 && (error as? KeenError)?.code == "QueryTimeoutError"
        }
        #expect(ticks.value < 10)

        let stopped = QueryBudget(seconds: 60, memoryLimit: .max)
        stopped.cancel("the server is stopping")
        #expect {
            _ = try QueryEngine.run(query, on: events, budget: stopped)
        } throws: { error in
            (error as? KeenError)?.status == 503
        }

        let small = QueryBudget(seconds: 60, memoryLimit: 1_000_000)
        #expect {
            _ = try QueryEngine.run(query, on: events, budget: small)
        } throws: { error in
            (error as? KeenError)?.code == "QueryTooLargeError"
        }
    }

    /// A query waits for another's turn only on a thread of its own: elsewhere (a store's serial
    /// queue) it could hold what the other query needs.
    @Test func aQueryPausesOnlyOnAThreadOfItsOwn() async throws {
        func yields(marked: Bool) async throws -> Int {
            try await withCheckedThrowingContinuation { continuation in
                Thread {
                    if marked { QueryThread.markCurrent() }
                    let calls = Counter()
                    let budget = QueryBudget(
                        seconds: 60, memoryLimit: .max,
                        yield: { _ in
                            _ = calls.next()
                            return 0
                        })
                    continuation.resume(
                        with: Result {
                            for _ in 0..<3 { try budget.check() }
                            return Int(calls.value)
                        })
                }.start()
            }
        }
        #expect(try await yields(marked: true) == 3)
        #expect(try await yields(marked: false) == 0)
    }
}

/// A clock for a budget: each read is the next tick.
final class Counter: Sendable {
    private let state = Mutex<UInt64>(0)
    var value: UInt64 { state.withLock { $0 } }
    func next() -> UInt64 {
        state.withLock { value in
            defer { value += 1 }
            return value
        }
    }
}
