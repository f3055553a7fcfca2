import Foundation
import JSON

/// A JSON Pointer (RFC 6901): `/liveData/plays/allPlays/61/count/balls`.
package struct JSONPointer: Sendable, Hashable, CustomStringConvertible {
    /// The reference tokens, unescaped (`~1` is `/`, `~0` is `~`).
    package var tokens: [String]

    package init(tokens: [String]) {
        self.tokens = tokens
    }

    /// Parses the pointer's text; "" is the whole document.
    package init(_ text: String) throws(JSONPatchError) {
        guard !text.isEmpty else {
            tokens = []
            return
        }
        guard text.hasPrefix("/") else { throw .badPointer(text, "must be empty or start with '/'") }
        var tokens: [String] = []
        for raw in text.dropFirst().split(separator: "/", omittingEmptySubsequences: false) {
            var token = ""
            var escape = false
            for character in raw {
                if escape {
                    switch character {
                    case "0": token.append("~")
                    case "1": token.append("/")
                    default: throw .badPointer(text, "'~\(character)' is not an escape (~0 or ~1)")
                    }
                    escape = false
                } else if character == "~" {
                    escape = true
                } else {
                    token.append(character)
                }
            }
            if escape { throw .badPointer(text, "ends with a lone '~'") }
            tokens.append(token)
        }
        self.tokens = tokens
    }

    package var description: String {
        tokens.map { "/" + $0.replacingOccurrences(of: "~", with: "~0").replacingOccurrences(of: "/", with: "~1") }
            .joined()
    }

    /// An array index token: digits without a leading zero (RFC 6901 §4).
    static func index(_ token: String) -> Int? {
        guard !token.isEmpty, token.allSatisfy(\.isASCII), token.allSatisfy(\.isNumber),
            token == "0" || !token.hasPrefix("0")
        else { return nil }
        return Int(token)
    }

    /// Whether `self` is `other` or inside it.
    func isWithin(_ other: JSONPointer) -> Bool {
        tokens.count >= other.tokens.count && Array(tokens.prefix(other.tokens.count)) == other.tokens
    }
}

/// Why a patch did not apply. The document is then left as it was.
package enum JSONPatchError: Error, Sendable, Equatable, CustomStringConvertible {
    case badPointer(String, String)
    case badOperation(index: Int, String)
    /// The path (or `from`) names nothing, or its parent is not a container.
    case noTarget(index: Int, op: String, path: String)
    case indexOutOfRange(index: Int, op: String, path: String)
    case moveIntoItself(index: Int, from: String, path: String)
    case testFailed(index: Int, path: String)

    package var description: String {
        switch self {
        case .badPointer(let text, let reason): "bad JSON pointer '\(text)': \(reason)"
        case .badOperation(let index, let reason): "operation \(index): \(reason)"
        case .noTarget(let index, let op, let path): "operation \(index) (\(op)): nothing at \(path)"
        case .indexOutOfRange(let index, let op, let path): "operation \(index) (\(op)): index out of range at \(path)"
        case .moveIntoItself(let index, let from, let path):
            "operation \(index) (move): cannot move \(from) into its own child \(path)"
        case .testFailed(let index, let path): "operation \(index) (test): the value at \(path) differs"
        }
    }
}

/// One RFC 6902 operation.
package enum PatchOperation: Sendable, Hashable {
    case add(path: JSONPointer, value: JSONValue)
    case remove(path: JSONPointer)
    case replace(path: JSONPointer, value: JSONValue)
    case move(from: JSONPointer, path: JSONPointer)
    case copy(from: JSONPointer, path: JSONPointer)
    case test(path: JSONPointer, value: JSONValue)

    /// Reads an operation object (`{"op": ..., "path": ..., ...}`); `index` is its place in the patch.
    package init(_ object: JSONValue, index: Int) throws(JSONPatchError) {
        guard case .object(let fields) = object else { throw .badOperation(index: index, "not an object") }
        guard let op = fields["op"]?.string else { throw .badOperation(index: index, "no \"op\"") }
        func pointer(_ key: String) throws(JSONPatchError) -> JSONPointer {
            guard let text = fields[key]?.string else {
                throw .badOperation(index: index, "\(op) needs a \"\(key)\" string")
            }
            return try JSONPointer(text)
        }
        func value() throws(JSONPatchError) -> JSONValue {
            guard let value = fields["value"] else { throw .badOperation(index: index, "\(op) needs a \"value\"") }
            return value
        }
        switch op {
        case "add": self = .add(path: try pointer("path"), value: try value())
        case "remove": self = .remove(path: try pointer("path"))
        case "replace": self = .replace(path: try pointer("path"), value: try value())
        case "move": self = .move(from: try pointer("from"), path: try pointer("path"))
        case "copy": self = .copy(from: try pointer("from"), path: try pointer("path"))
        case "test": self = .test(path: try pointer("path"), value: try value())
        default: throw .badOperation(index: index, "unknown op '\(op)'")
        }
    }

    var name: String {
        switch self {
        case .add: "add"
        case .remove: "remove"
        case .replace: "replace"
        case .move: "move"
        case .copy: "copy"
        case .test: "test"
        }
    }
}

/// An RFC 6902 patch: operations applied in order, all or nothing.
package struct JSONPatch: Sendable, Hashable {
    package var operations: [PatchOperation]

    package init(_ operations: [PatchOperation]) {
        self.operations = operations
    }

    /// Reads a patch document: an array of operation objects.
    package init(_ document: JSONValue) throws(JSONPatchError) {
        guard case .array(let items) = document else { throw .badOperation(index: 0, "a patch is an array") }
        var operations: [PatchOperation] = []
        operations.reserveCapacity(items.count)
        for (index, item) in items.enumerated() { operations.append(try PatchOperation(item, index: index)) }
        self.operations = operations
    }

    /// Applies every operation to `document`; on any error the document is left unchanged.
    package func apply(to document: inout JSONValue) throws(JSONPatchError) {
        var result = document
        for (index, operation) in operations.enumerated() {
            try Self.apply(operation, index: index, to: &result)
        }
        document = result
    }

    /// The patched copy of `document`.
    package func applied(to document: JSONValue) throws(JSONPatchError) -> JSONValue {
        var copy = document
        try apply(to: &copy)
        return copy
    }

    static func apply(_ operation: PatchOperation, index: Int, to document: inout JSONValue) throws(JSONPatchError) {
        let name = operation.name
        switch operation {
        case .add(let path, let value):
            try add(value, at: path, in: &document, index: index, op: name)
        case .remove(let path):
            _ = try remove(at: path, in: &document, index: index, op: name)
        case .replace(let path, let value):
            guard !path.tokens.isEmpty else {
                document = value
                return
            }
            try modify(&document, at: path.tokens.dropLast(), index: index, op: name, path: path) {
                container throws(JSONPatchError) in
                let last = path.tokens[path.tokens.count - 1]
                switch container {
                case .object(var object):
                    guard object[last] != nil else { throw .noTarget(index: index, op: name, path: "\(path)") }
                    container = .null
                    object[last] = value
                    container = .object(object)
                case .array(var array):
                    guard let position = JSONPointer.index(last), array.indices.contains(position) else {
                        throw .indexOutOfRange(index: index, op: name, path: "\(path)")
                    }
                    container = .null
                    array[position] = value
                    container = .array(array)
                default:
                    throw .noTarget(index: index, op: name, path: "\(path)")
                }
            }
        case .move(let from, let path):
            guard from != path else {
                guard document.value(at: from) != nil else {
                    throw .noTarget(index: index, op: name, path: "\(from)")
                }
                return
            }
            if path.isWithin(from) { throw .moveIntoItself(index: index, from: "\(from)", path: "\(path)") }
            let value = try remove(at: from, in: &document, index: index, op: name)
            try add(value, at: path, in: &document, index: index, op: name)
        case .copy(let from, let path):
            guard let value = document.value(at: from) else {
                throw .noTarget(index: index, op: name, path: "\(from)")
            }
            try add(value, at: path, in: &document, index: index, op: name)
        case .test(let path, let value):
            guard let current = document.value(at: path) else {
                throw .noTarget(index: index, op: name, path: "\(path)")
            }
            guard Self.equal(current, value) else { throw .testFailed(index: index, path: "\(path)") }
        }
    }

    static func add(
        _ value: JSONValue, at path: JSONPointer, in document: inout JSONValue, index: Int, op: String
    ) throws(JSONPatchError) {
        guard let last = path.tokens.last else {
            document = value
            return
        }
        try modify(&document, at: path.tokens.dropLast(), index: index, op: op, path: path) {
            container throws(JSONPatchError) in
            switch container {
            case .object(var object):
                container = .null
                object[last] = value
                container = .object(object)
            case .array(var array):
                let position: Int
                if last == "-" {
                    position = array.count
                } else {
                    guard let parsed = JSONPointer.index(last), parsed <= array.count else {
                        throw .indexOutOfRange(index: index, op: op, path: "\(path)")
                    }
                    position = parsed
                }
                container = .null
                array.insert(value, at: position)
                container = .array(array)
            default:
                throw .noTarget(index: index, op: op, path: "\(path)")
            }
        }
    }

    static func remove(
        at path: JSONPointer, in document: inout JSONValue, index: Int, op: String
    ) throws(JSONPatchError) -> JSONValue {
        guard let last = path.tokens.last else { throw .noTarget(index: index, op: op, path: "\(path)") }
        var removed = JSONValue.null
        try modify(&document, at: path.tokens.dropLast(), index: index, op: op, path: path) {
            container throws(JSONPatchError) in
            switch container {
            case .object(var object):
                container = .null
                guard let value = object.removeValue(forKey: last) else {
                    container = .object(object)
                    throw .noTarget(index: index, op: op, path: "\(path)")
                }
                removed = value
                container = .object(object)
            case .array(var array):
                guard let position = JSONPointer.index(last), array.indices.contains(position) else {
                    throw .indexOutOfRange(index: index, op: op, path: "\(path)")
                }
                container = .null
                removed = array.remove(at: position)
                container = .array(array)
            default:
                throw .noTarget(index: index, op: op, path: "\(path)")
            }
        }
        return removed
    }

    /// Runs `change` on the container at `tokens`, in place: each level is taken out of its parent
    /// while it changes, so a 1.5 MB feed is not copied for every operation.
    static func modify(
        _ value: inout JSONValue, at tokens: ArraySlice<String>, index: Int, op: String, path: JSONPointer,
        _ change: (inout JSONValue) throws(JSONPatchError) -> Void
    ) throws(JSONPatchError) {
        guard let first = tokens.first else {
            try change(&value)
            return
        }
        let rest = tokens.dropFirst()
        switch value {
        case .object(var object):
            guard var child = object[first] else { throw .noTarget(index: index, op: op, path: "\(path)") }
            value = .null
            object[first] = .null
            defer { value = .object(object) }
            defer { object[first] = child }
            try modify(&child, at: rest, index: index, op: op, path: path, change)
        case .array(var array):
            guard let position = JSONPointer.index(first), array.indices.contains(position) else {
                throw .indexOutOfRange(index: index, op: op, path: "\(path)")
            }
            var child = array[position]
            value = .null
            array[position] = .null
            defer { value = .array(array) }
            defer { array[position] = child }
            try modify(&child, at: rest, index: index, op: op, path: path, change)
        default:
            throw .noTarget(index: index, op: op, path: "\(path)")
        }
    }

    /// JSON equality for `test`: numbers by value, objects whatever their members' order.
    static func equal(_ a: JSONValue, _ b: JSONValue) -> Bool {
        switch (a, b) {
        case (.array(let x), .array(let y)): return x.count == y.count && zip(x, y).allSatisfy { equal($0, $1) }
        case (.object(let x), .object(let y)):
            return x.count == y.count && x.members.allSatisfy { key, value in y[key].map { equal(value, $0) } ?? false }
        default: return a == b
        }
    }
}

extension JSONPatch {
    /// A patch that turns `old` into `new`: `replace` for changed values, `add` and `remove` for
    /// members and trailing array elements (removed from the end first, so indexes hold).
    package static func diff(from old: JSONValue, to new: JSONValue) -> JSONPatch {
        var operations: [PatchOperation] = []
        diff(old, new, at: [], into: &operations)
        return JSONPatch(operations)
    }

    private static func diff(
        _ old: JSONValue, _ new: JSONValue, at path: [String], into operations: inout [PatchOperation]
    ) {
        switch (old, new) {
        case (.object(let before), .object(let after)):
            for key in before.keys.sorted() where after[key] == nil {
                operations.append(.remove(path: JSONPointer(tokens: path + [key])))
            }
            for key in after.keys.sorted() {
                guard let value = after[key] else { continue }
                if let previous = before[key] {
                    diff(previous, value, at: path + [key], into: &operations)
                } else {
                    operations.append(.add(path: JSONPointer(tokens: path + [key]), value: value))
                }
            }
        case (.array(let before), .array(let after)):
            let common = min(before.count, after.count)
            for index in 0..<common {
                diff(before[index], after[index], at: path + [String(index)], into: &operations)
            }
            if before.count > after.count {
                for index in (after.count..<before.count).reversed() {
                    operations.append(.remove(path: JSONPointer(tokens: path + [String(index)])))
                }
            } else {
                for index in common..<after.count {
                    operations.append(.add(path: JSONPointer(tokens: path + [String(index)]), value: after[index]))
                }
            }
        default:
            if !equal(old, new) || old != new {
                operations.append(.replace(path: JSONPointer(tokens: path), value: new))
            }
        }
    }

    /// The patch as its JSON document.
    package var document: JSONValue {
        .array(
            operations.map { operation in
                switch operation {
                case .add(let path, let value):
                    .object(["op": .string("add"), "path": .string("\(path)"), "value": value])
                case .remove(let path): .object(["op": .string("remove"), "path": .string("\(path)")])
                case .replace(let path, let value):
                    .object(["op": .string("replace"), "path": .string("\(path)"), "value": value])
                case .move(let from, let path):
                    .object(["op": .string("move"), "from": .string("\(from)"), "path": .string("\(path)")])
                case .copy(let from, let path):
                    .object(["op": .string("copy"), "from": .string("\(from)"), "path": .string("\(path)")])
                case .test(let path, let value):
                    .object(["op": .string("test"), "path": .string("\(path)"), "value": value])
                }
            })
    }
}
