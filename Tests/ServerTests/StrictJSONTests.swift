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

/// The strict reader's keys and the OpenAPI document's properties are one list: a field the
/// document offers and the reader refuses is a 400 for a valid request (schemathesis found
/// `unofficial_bids` so), and a key the reader takes that the document leaves out is undocumented.
@Suite struct StrictKeysMatchTheDocumentTests {
    static var schemas: [String: Any]? {
        (OpenAPIDocument.checkedIn()["components"] as? [String: Any])?["schemas"] as? [String: Any]
    }

    /// Every object the schema describes, by path, with its property names.
    static func objects(_ schema: [String: Any], path: String, into found: inout [String: Set<String>]) {
        if let reference = schema["$ref"] as? String, let name = reference.split(separator: "/").last,
            let target = schemas?[String(name)] as? [String: Any]
        {
            objects(target, path: path, into: &found)
            return
        }
        for variant in (schema["oneOf"] as? [[String: Any]] ?? []) { objects(variant, path: path, into: &found) }
        if let items = schema["items"] as? [String: Any] { objects(items, path: path, into: &found) }
        guard let properties = schema["properties"] as? [String: Any] else { return }
        found[path, default: []].formUnion(properties.keys)
        for (name, inner) in properties {
            if let inner = inner as? [String: Any] { objects(inner, path: path + "." + name, into: &found) }
        }
    }

    /// Every object the reader takes, by path, with its key names.
    static func objects(_ keys: StrictJSON.Keys, path: String, into found: inout [String: Set<String>]) {
        switch keys {
        case .value: return
        case .nullable(let inner): objects(inner, path: path, into: &found)
        case .object(let members):
            found[path, default: []].formUnion(members.keys)
            for (name, inner) in members { objects(inner, path: path + "." + name, into: &found) }
        }
    }

    @Test(arguments: [("Preferences", StrictJSON.Keys.preferences), ("DeviceRegistration", .deviceRegistration)])
    func theReaderTakesWhatTheDocumentOffers(schema name: String, keys: StrictJSON.Keys) throws {
        let schema = try #require(Self.schemas?[name] as? [String: Any], "no schema \(name) in openapi.json")
        var documented: [String: Set<String>] = [:]
        var read: [String: Set<String>] = [:]
        Self.objects(schema, path: name, into: &documented)
        Self.objects(keys, path: name, into: &read)
        for (path, names) in documented {
            let taken = read[path] ?? []
            let refused = names.subtracting(taken).sorted()
            let undocumented = taken.subtracting(names).sorted()
            #expect(refused.isEmpty, "\(path): documented, refused: \(refused)")
            #expect(undocumented.isEmpty, "\(path): taken, undocumented: \(undocumented)")
        }
        #expect(Set(read.keys).subtracting(documented.keys).isEmpty, "objects read, not documented")
    }
}
