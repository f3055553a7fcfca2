import Testing

@testable import Server

/// The strict reading of request bodies: grammar, encoding, depth, and keys given twice or unknown.
@Suite struct StrictJSONTests {
    static let keys = StrictJSON.Keys.object([
        "a": .value, "list": .object(["x": .value]), "nested": .object(["b": .value, "c": .object(["d": .value])]),
        "n": .nullable(.value), "q": .nullable(.object(["x": .value])),
    ])

    @Test(arguments: [
        #"{}"#, #"{"a":1}"#, #" { "a" : [1, -2.5e3, true, false, "x\u00e9\n"] } "#, #"{"n":null}"#, #"{"q":null}"#,
        #"{"q":{"x":1}}"#,
        #"{"nested":{"b":{"any":"thing"},"c":{"d":0}}}"#, #"{"list":[{"x":1},{"x":2}]}"#, #"{"a":"é"}"#,
    ])
    func wellFormedBodiesPass(text: String) throws {
        try StrictJSON.check(Array(text.utf8), keys: Self.keys)
    }

    @Test(arguments: [
        (#"{"a":1,"a":2}"#, "has the key 'a' twice"),
        (#"{"nested":{"b":1,"b":2}}"#, "nested: has the key 'b' twice"),
        (#"{"A":1}"#, "has an unknown key 'A'"),
        (#"{"nested":{"c":{"e":1}}}"#, "nested.c: has an unknown key 'e'"),
        (#"{"list":[{"x":1},{"y":2}]}"#, "list[1]: has an unknown key 'y'"),
        (#"{"a":null}"#, "a: must not be null"),
        (#"{"a":[1,null]}"#, "a[1]: must not be null"),
        (#"{"q":{"y":1}}"#, "q: has an unknown key 'y'"),
        (#"{"a":01}"#, "leading zero"),
        (#"{"a":1.}"#, "without digits after '.'"),
        (#"{"a":1e}"#, "without digits in its exponent"),
        (#"{"a":"\x"}"#, "unknown escape"),
        ("{\"a\":\"tab\there\"}", "control character inside a string"),
        (#"{"a":tru}"#, "unknown word"),
        (#"{"a":1}{"#, "has more after the value"),
        (#"{"a" 1}"#, "expects ':'"),
        (#"{"a":1,}"#, "expects a key in quotes"),
        (#"["#, "ends where a value should be"),
        (#""open"#, "ends inside a string"),
    ])
    func malformedBodiesAreRefusedSayingWhatAndWhere(text: String, reason: String) {
        do {
            try StrictJSON.check(Array(text.utf8), keys: Self.keys)
            Issue.record("accepted: \(text)")
        } catch {
            #expect(error.description.contains(reason), "\(text): \(error)")
        }
    }

    @Test func onlyUTF8WithoutAByteOrderMark() {
        #expect(throws: StrictJSON.Failure.self) {
            try StrictJSON.check([0xEF, 0xBB, 0xBF] + Array("{}".utf8), keys: .value)
        }
        #expect(throws: StrictJSON.Failure.self) { try StrictJSON.check([0x7B, 0xFF, 0x7D], keys: .value) }
        let utf16 = Array("{}".utf16).flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
        #expect(throws: StrictJSON.Failure.self) { try StrictJSON.check(utf16, keys: .value) }
    }

    @Test func nestingIsBounded() {
        let deep = String(repeating: "[", count: 40) + String(repeating: "]", count: 40)
        #expect(throws: StrictJSON.Failure.self) { try StrictJSON.check(Array(deep.utf8), keys: .value) }
        let fine = String(repeating: "[", count: 20) + String(repeating: "]", count: 20)
        #expect(throws: Never.self) { try StrictJSON.check(Array(fine.utf8), keys: .value) }
    }
}
