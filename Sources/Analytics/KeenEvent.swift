import Foundation
import JSON

/// One property of an event, flattened: its dotted path (property names cannot hold a dot, so
/// the path is unambiguous) and its value. Nested objects become their leaves; an empty object
/// is a leaf of its own; a list is kept whole (lists of objects are stored but not filterable,
/// as in Keen).
public struct EventLeaf: Sendable, Hashable {
    public var path: String
    public var value: FieldValue

    public init(path: String, value: FieldValue) {
        self.path = path
        self.value = value
    }
}

/// A property's value as queries see it.
public enum FieldValue: Sendable, Hashable, Comparable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case list([JSONValue])
    case emptyObject

    public var json: JSONValue {
        switch self {
        case .null: .null
        case .bool(let value): .bool(value)
        case .number(let value): .number(value)
        case .string(let value): .string(value)
        case .list(let values): .array(values)
        case .emptyObject: .object(JSONObject())
        }
    }

    public init(_ json: JSONValue) {
        switch json {
        case .null: self = .null
        case .bool(let value): self = .bool(value)
        case .number(let value): self = .number(value)
        case .string(let value): self = .string(value)
        case .array(let values): self = .list(values)
        case .object(let object): self = object.isEmpty ? .emptyObject : .string(json.jsonText)
        }
    }

    /// The schema's name for the type (`GET /events/{collection}`).
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "bool"
        case .number: "num"
        case .string: "string"
        case .list: "list"
        case .emptyObject: "object"
        }
    }

    var rank: Int {
        switch self {
        case .null: 0
        case .bool: 1
        case .number: 2
        case .string: 3
        case .list: 4
        case .emptyObject: 5
        }
    }

    /// An order over every value (null, booleans, numbers, strings, ...), for sorted answers.
    public static func < (lhs: FieldValue, rhs: FieldValue) -> Bool {
        switch (lhs, rhs) {
        case (.bool(let a), .bool(let b)): return !a && b
        case (.number(let a), .number(let b)): return a < b
        case (.string(let a), .string(let b)): return a < b
        case (.list(let a), .list(let b)): return JSONValue.array(a).jsonText < JSONValue.array(b).jsonText
        default: return lhs.rank < rhs.rank
        }
    }
}

/// An event as received, checked and flattened, ready to store: what `POST /events` turns each
/// event into. The `keen` block's `timestamp` (the client's, or the time it arrived),
/// `created_at` and `id` are the store's columns, not leaves; `uniqueness_token` is kept apart.
public struct IncomingEvent: Sendable, Hashable {
    /// When it happened (microseconds since 1970): `keen.timestamp` as sent, else the arrival.
    public var timestamp: Int64
    /// `keen.uniqueness_token`: a repeat within 31 days in the same collection is dropped.
    public var token: String?
    public var leaves: [EventLeaf]
}

/// Keen's rules for events (its docs and clients): collection names of 1–64 characters, not
/// starting with `$`, without control characters; property names of 1–256 characters without
/// `.`, not starting with `$`; strings of at most 10,000 characters; `keen` an object whose
/// members are those Keen defines.
public enum KeenEventRules {
    public static let maximumCollectionLength = 64
    public static let maximumPropertyNameLength = 256
    public static let maximumStringLength = 10_000
    public static let maximumTokenLength = 64
    /// The largest event, in bytes of JSON.
    public static let maximumEventBytes = 900 * 1024
    /// How long a uniqueness token holds: 31 days.
    public static let tokenLifetime: Int64 = 31 * 86_400 * 1_000_000
    /// The `keen` members an event may carry (`created_at` and `id` are replaced by the server's).
    public static let keenMembers: Set<String> = [
        "timestamp", "created_at", "id", "uniqueness_token", "addons", "location",
    ]

    public static func checkCollection(_ name: String) throws(KeenError) {
        guard !name.isEmpty else { throw .invalidCollectionName("an event collection needs a name") }
        guard name.count <= maximumCollectionLength else {
            throw .invalidCollectionName(
                "the collection name '\(name.prefix(80))…' is longer than \(maximumCollectionLength) characters")
        }
        guard !name.hasPrefix("$") else {
            throw .invalidCollectionName("the collection name '\(name)' starts with '$'")
        }
        guard !name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw .invalidCollectionName("the collection name holds a control character")
        }
    }

    static func checkPropertyName(_ name: String, path: String) throws(KeenError) {
        // Every event's every property comes here: a name of printable ASCII without a dot or a
        // leading '$', short enough by its bytes, is decided in one pass over its bytes (a
        // Foundation string search and the shown name made up front took 29% of the server's CPU
        // during ingest).
        var printable = true
        for byte in name.utf8 {
            if byte < 0x20 || byte >= 0x7F || byte == UInt8(ascii: ".") {
                printable = false
                break
            }
        }
        if printable, let first = name.utf8.first, first != UInt8(ascii: "$"),
            name.utf8.count <= maximumPropertyNameLength
        {
            return
        }
        let shown = path.isEmpty ? name : "\(path).\(name)"
        guard !name.isEmpty else { throw .invalidPropertyName("a property under '\(path)' has an empty name") }
        guard !name.utf8.contains(UInt8(ascii: ".")) else {
            throw .invalidPropertyName("the property name '\(shown)' holds a '.' (dots separate nested names)")
        }
        guard !name.hasPrefix("$") else { throw .invalidPropertyName("the property name '\(shown)' starts with '$'") }
        // A NUL or another control character would reach the database's text and every report.
        if let control = name.unicodeScalars.first(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }) {
            let code = String(control.value, radix: 16, uppercase: true)
            let printable = String(String.UnicodeScalarView(shown.unicodeScalars.filter { $0.value >= 0x20 }))
            throw .invalidPropertyName(
                "the property name '\(printable.prefix(80))' holds a control character (U+\(String(repeating: "0", count: max(0, 4 - code.count)) + code))"
            )
        }
        guard name.count <= maximumPropertyNameLength else {
            throw .invalidPropertyName(
                "the property name '\(shown.prefix(80))…' is longer than \(maximumPropertyNameLength) characters")
        }
    }

    /// Checks `event` and flattens it; `now` is the arrival time, the timestamp when the client
    /// sent none. `autofill` (an access key's `options.writes.autofill`) is merged in first-level
    /// wise, the key's values winning.
    public static func normalize(
        _ event: JSONValue, now: Int64, autofill: JSONObject? = nil
    ) throws(KeenError) -> IncomingEvent {
        guard case .object(var object) = event else {
            throw .invalidEvent("an event must be a JSON object, not \(event.typeName)")
        }
        if let autofill {
            for member in autofill.members { object[member.key] = member.value }
        }
        var timestamp = now
        var token: String?
        var leaves: [EventLeaf] = []
        leaves.reserveCapacity(object.members.count * 2)
        for member in object.members {
            if member.key == "keen" {
                guard case .object(var keen) = member.value else {
                    throw .namespaceType("'keen' must be an object, not \(member.value.typeName)")
                }
                for key in keen.keys where !keenMembers.contains(key) {
                    throw .invalidKeenProperty(
                        "keen.\(key) is not a property Keen defines (\(keenMembers.sorted().joined(separator: ", ")))")
                }
                if let sent = keen["timestamp"], sent != .null {
                    guard let text = sent.string, let parsed = KeenTime.parse(text) else {
                        throw .invalidPropertyValue(
                            "keen.timestamp must be an ISO 8601 time such as 2026-11-24T18:30:00.000Z, not \(sent.jsonText.prefix(60))"
                        )
                    }
                    timestamp = parsed
                }
                if let sent = keen["uniqueness_token"], sent != .null {
                    guard let text = sent.string, !text.isEmpty, text.count <= maximumTokenLength else {
                        throw .invalidPropertyValue(
                            "keen.uniqueness_token must be a string of 1 to \(maximumTokenLength) characters")
                    }
                    // PostgreSQL's text holds no NUL: the event is refused alone, on every store alike,
                    // instead of failing its whole batch there.
                    guard !text.utf8.contains(0) else {
                        throw .invalidPropertyValue("keen.uniqueness_token must not contain a NUL character")
                    }
                    token = text
                }
                if let addons = keen["addons"], addons != .null {
                    let results = try KeenAddons.apply(addons, to: object, timestamp: timestamp)
                    for (path, value) in results { try flatten(value, path: path, into: &leaves, depth: 1) }
                }
                if let location = keen["location"], location != .null {
                    try checkLocation(location)
                }
                for key in ["timestamp", "created_at", "id", "addons"] { keen[key] = nil }
                for inner in keen.members {
                    try flatten(inner.value, path: "keen.\(inner.key)", into: &leaves, depth: 1)
                }
                continue
            }
            try checkPropertyName(member.key, path: "")
            try flatten(member.value, path: member.key, into: &leaves, depth: 1)
        }
        return IncomingEvent(timestamp: timestamp, token: token, leaves: leaves)
    }

    static func checkLocation(_ location: JSONValue) throws(KeenError) {
        guard let coordinates = location["coordinates"]?.array, coordinates.count == 2,
            let longitude = coordinates[0].number, let latitude = coordinates[1].number,
            (-180...180).contains(longitude), (-90...90).contains(latitude)
        else {
            throw .invalidPropertyValue(
                "keen.location must be {\"coordinates\": [longitude, latitude]} with longitude in -180...180 and latitude in -90...90"
            )
        }
    }

    static func flatten(
        _ value: JSONValue, path: String, into leaves: inout [EventLeaf], depth: Int
    ) throws(KeenError) {
        switch value {
        case .object(let object):
            if object.isEmpty {
                leaves.append(EventLeaf(path: path, value: .emptyObject))
                return
            }
            for member in object.members {
                try checkPropertyName(member.key, path: path)
                try flatten(member.value, path: path + "." + member.key, into: &leaves, depth: depth + 1)
            }
        case .string(let text):
            guard text.utf8.count <= maximumStringLength || text.count <= maximumStringLength else {
                throw .invalidPropertyValue("\(path) is a string longer than \(maximumStringLength) characters")
            }
            leaves.append(EventLeaf(path: path, value: .string(text)))
        case .array(let elements):
            for element in elements {
                if case .string(let text) = element, text.count > maximumStringLength {
                    throw .invalidPropertyValue(
                        "\(path) holds a string longer than \(maximumStringLength) characters")
                }
            }
            leaves.append(EventLeaf(path: path, value: .list(elements)))
        case .null: leaves.append(EventLeaf(path: path, value: .null))
        case .bool(let flag): leaves.append(EventLeaf(path: path, value: .bool(flag)))
        case .number(let number): leaves.append(EventLeaf(path: path, value: .number(number)))
        }
    }

    /// Rebuilds an event's JSON from its leaves and columns, the `keen` block first as Keen
    /// returns it.
    public static func rebuild(
        leaves: [EventLeaf], timestamp: Int64, createdAt: Int64, id: String
    ) -> JSONValue {
        var keen = JSONObject([
            ("timestamp", .string(KeenTime.format(timestamp))), ("created_at", .string(KeenTime.format(createdAt))),
            ("id", .string(id)),
        ])
        var root = JSONObject()
        for leaf in leaves {
            let parts = leaf.path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            if parts.first == "keen" {
                insert(leaf.value.json, at: parts.dropFirst(), into: &keen)
            } else {
                insert(leaf.value.json, at: parts[...], into: &root)
            }
        }
        root.members.insert(("keen", .object(keen)), at: 0)
        return .object(root)
    }

    static func insert(_ value: JSONValue, at path: ArraySlice<String>, into object: inout JSONObject) {
        guard let first = path.first else { return }
        if path.count == 1 {
            object[first] = value
            return
        }
        var child = object[first]?.object ?? JSONObject()
        insert(value, at: path.dropFirst(), into: &child)
        object[first] = .object(child)
    }
}
