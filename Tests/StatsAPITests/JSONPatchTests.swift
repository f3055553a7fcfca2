import Alerts
import Clocks
import FakeStatsAPI
import Foundation
import JSON
import Retrosheet
import TestSupport
import Testing

@testable import StatsAPI

/// RFC 6902's operations, with examples from its Appendix A, and RFC 6901 pointers.
@Suite struct JSONPatchTests {
    static func json(_ text: String) throws -> JSONValue { try JSONValue(parsing: Data(text.utf8)) }

    static func patched(_ document: String, _ patch: String) throws -> JSONValue {
        try JSONPatch(try json(patch)).applied(to: try json(document))
    }

    @Test(arguments: [
        // A.1 adding an object member
        (#"{"foo":"bar"}"#, #"[{"op":"add","path":"/baz","value":"qux"}]"#, #"{"baz":"qux","foo":"bar"}"#),
        // A.2 adding an array element
        (#"{"foo":["bar","baz"]}"#, #"[{"op":"add","path":"/foo/1","value":"qux"}]"#, #"{"foo":["bar","qux","baz"]}"#),
        // A.3 removing an object member
        (#"{"baz":"qux","foo":"bar"}"#, #"[{"op":"remove","path":"/baz"}]"#, #"{"foo":"bar"}"#),
        // A.4 removing an array element
        (#"{"foo":["bar","qux","baz"]}"#, #"[{"op":"remove","path":"/foo/1"}]"#, #"{"foo":["bar","baz"]}"#),
        // A.5 replacing a value
        (
            #"{"baz":"qux","foo":"bar"}"#, #"[{"op":"replace","path":"/baz","value":"boo"}]"#,
            #"{"baz":"boo","foo":"bar"}"#
        ),
        // A.6 moving a value
        (
            #"{"foo":{"bar":"baz","waldo":"fred"},"qux":{"corge":"grault"}}"#,
            #"[{"op":"move","from":"/foo/waldo","path":"/qux/thud"}]"#,
            #"{"foo":{"bar":"baz"},"qux":{"corge":"grault","thud":"fred"}}"#
        ),
        // A.7 moving an array element
        (
            #"{"foo":["all","grass","cows","eat"]}"#, #"[{"op":"move","from":"/foo/1","path":"/foo/3"}]"#,
            #"{"foo":["all","cows","eat","grass"]}"#
        ),
        // A.8 testing a value: success
        (
            #"{"baz":"qux","foo":["a",2,"c"]}"#,
            #"[{"op":"test","path":"/baz","value":"qux"},{"op":"test","path":"/foo/1","value":2}]"#,
            #"{"baz":"qux","foo":["a",2,"c"]}"#
        ),
        // A.10 adding a nested member object
        (
            #"{"foo":"bar"}"#, #"[{"op":"add","path":"/child","value":{"grandchild":{}}}]"#,
            #"{"foo":"bar","child":{"grandchild":{}}}"#
        ),
        // A.14 ~ escape ordering
        (#"{"/":9,"~1":10}"#, #"[{"op":"test","path":"/~01","value":10}]"#, #"{"/":9,"~1":10}"#),
        // A.16 adding an array value
        (
            #"{"foo":["bar"]}"#, #"[{"op":"add","path":"/foo/-","value":["abc","def"]}]"#,
            #"{"foo":["bar",["abc","def"]]}"#
        ),
        // copy, and replace of the whole document
        (#"{"a":{"b":1}}"#, #"[{"op":"copy","from":"/a","path":"/c"}]"#, #"{"a":{"b":1},"c":{"b":1}}"#),
        (#"{"a":1}"#, #"[{"op":"replace","path":"","value":[1]}]"#, #"[1]"#),
        (#"{"a/b":1}"#, #"[{"op":"replace","path":"/a~1b","value":2}]"#, #"{"a/b":2}"#),
        // test compares numbers by value
        (#"{"a":1}"#, #"[{"op":"test","path":"/a","value":1.0}]"#, #"{"a":1}"#),
    ])
    func appliesAsTheRFCSays(document: String, patch: String, expected: String) throws {
        #expect(try Self.patched(document, patch) == Self.json(expected))
    }

    @Test(arguments: [
        // A.9 testing a value: error
        (#"{"baz":"qux"}"#, #"[{"op":"test","path":"/baz","value":"bar"}]"#),
        // A.12 adding to a nonexistent target
        (#"{"foo":"bar"}"#, #"[{"op":"add","path":"/baz/bat","value":"qux"}]"#),
        // A.15 comparing strings and numbers
        (#"{"/":9,"~1":10}"#, #"[{"op":"test","path":"/~01","value":"10"}]"#),
        // removing or replacing what is not there, indexes out of range, a bad op, a bad pointer
        (#"{"a":1}"#, #"[{"op":"remove","path":"/b"}]"#),
        (#"{"a":1}"#, #"[{"op":"replace","path":"/b","value":1}]"#),
        (#"{"a":[1]}"#, #"[{"op":"add","path":"/a/5","value":1}]"#),
        (#"{"a":[1]}"#, #"[{"op":"remove","path":"/a/01"}]"#),
        (#"{"a":1}"#, #"[{"op":"frobnicate","path":"/a"}]"#),
        (#"{"a":1}"#, #"[{"op":"add","path":"a","value":1}]"#),
        (#"{"a":1}"#, #"[{"op":"add","path":"/a~2","value":1}]"#),
        (#"{"a":{"b":1}}"#, #"[{"op":"move","from":"/a","path":"/a/b/c"}]"#),
        (#"{"a":1}"#, #"[{"op":"copy","from":"/nothing","path":"/b"}]"#),
        (#"{"a":1}"#, #"[{"op":"add","path":"/b"}]"#),
    ])
    func refusesWhatTheRFCCallsErrors(document: String, patch: String) throws {
        #expect(throws: JSONPatchError.self) { try Self.patched(document, patch) }
    }

    @Test func aFailingOperationLeavesTheDocumentUnchanged() throws {
        var document = try Self.json(#"{"a":[1,2],"b":{"c":3}}"#)
        let before = document
        let patch = try JSONPatch(
            Self.json(
                #"[{"op":"add","path":"/a/-","value":3},{"op":"remove","path":"/b/c"},{"op":"remove","path":"/zzz"}]"#))
        #expect(throws: JSONPatchError.noTarget(index: 2, op: "remove", path: "/zzz")) {
            try patch.apply(to: &document)
        }
        #expect(document == before)
    }

    @Test func pointersRoundTripTheirEscapes() throws {
        let pointer = try JSONPointer("/a~1b/c~0d/0/")
        #expect(pointer.tokens == ["a/b", "c~d", "0", ""])
        #expect(pointer.description == "/a~1b/c~0d/0/")
        #expect(try JSONPointer("").tokens.isEmpty)
    }
}

/// The diff the fake Stats API sends applies and reproduces the newer document.
@Suite struct JSONDiffTests {
    /// Two feeds of Giolito's no-hitter as the fake serves them, an inning and a half apart.
    @Test func theDiffBetweenTwoSnapshotsOfAGameTurnsOneIntoTheOther() throws {
        let games = try ReplaySchedule.games(on: "2020-08-25", data: [TestData.path("retrosheet")])
        let game = try #require(games.first { $0.record.id == "CHA202008250" })
        let server = FakeStatsAPIServer(date: "2020-08-25", games: games, clock: ManualWallClock(game.start))
        let a = try server.document(game, at: game.start.addingTimeInterval(3_600))
        let b = try server.document(game, at: game.start.addingTimeInterval(5_400))
        try Self.check(a, b)
    }

    static func check(_ a: JSONValue, _ b: JSONValue) throws {
        let patch = JSONPatch.diff(from: a, to: b)
        #expect(!patch.operations.isEmpty)
        #expect(try patch.applied(to: a) == b)
        // Through its JSON form, as the fake sends it.
        #expect(try JSONPatch(patch.document).applied(to: a) == b)
        #expect(JSONPatch.diff(from: b, to: b).operations.isEmpty)
        #expect(try JSONPatch.diff(from: b, to: a).applied(to: b) == a)
    }
}

extension JSONDiffTests {
    /// Two snapshots of a real game in progress, as MLB served them.
    @Suite(.extended, .heavy) struct Extended {
        @Test func theDiffBetweenTwoRecordedSnapshotsTurnsOneIntoTheOther() throws {
            try JSONDiffTests.check(
                try RecordedResponseTests.document("gumbo-746139-snapshot-a.json"),
                try RecordedResponseTests.document("gumbo-746139-snapshot-b.json"))
        }
    }
}
