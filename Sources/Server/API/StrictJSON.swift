/// A JSON request body read strictly, before it is decoded: UTF-8 only (no byte-order mark),
/// RFC 8259's grammar, nesting at most `maximumDepth` deep, and no key twice in one object — a
/// parser that keeps the first or the last of two keys would let a client say two things at
/// once. The keys of each object are then checked against what the body type takes (`Keys`), so an
/// unknown key (a typo, `thresholdInnings` for `threshold_innings`) is refused with its name
/// rather than ignored. Pure: the API's bodies and the fuzzer go through the same code.
package enum StrictJSON {
    package static let maximumDepth = 32

    /// The keys a body takes: for an object, each key's own keys; `.value` for anything else.
    /// `null` is refused unless the key is `.nullable` (where it means something, such as quiet
    /// hours turned off): a client that means "leave it" leaves the key out.
    package indirect enum Keys: Sendable {
        case value
        case object([String: Keys])
        case nullable(Keys)
    }

    /// Why a body is refused: what, where (a path such as `preferences.quiet_hours`), why.
    package struct Failure: Error, Sendable, Hashable, CustomStringConvertible {
        package var reason: String
        package var path: String
        /// Byte offset in the body, where the syntax is at fault.
        package var offset: Int?

        package var description: String {
            "\(path.isEmpty ? "the document" : path): \(reason)" + (offset.map { " (at byte \($0))" } ?? "")
        }
    }

    /// Checks `bytes` and the keys of every object against `keys`.
    package static func check(_ bytes: [UInt8], keys: Keys) throws(Failure) {
        guard bytes.count < 3 || !(bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF) else {
            throw Failure(reason: "starts with a byte-order mark; send UTF-8 without one", path: "", offset: 0)
        }
        guard String(validating: bytes, as: UTF8.self) != nil else {
            throw Failure(reason: "is not UTF-8", path: "", offset: nil)
        }
        if let nul = bytes.firstIndex(of: 0) {
            throw Failure(reason: "is not UTF-8 JSON (it holds NUL bytes, as UTF-16 text does)", path: "", offset: nul)
        }
        var parser = Parser(bytes: bytes)
        try parser.value(keys: keys, path: "", depth: 0)
        parser.skipSpace()
        guard parser.position == bytes.count else {
            throw Failure(reason: "has more after the value", path: "", offset: parser.position)
        }
    }

    private struct Parser {
        let bytes: [UInt8]
        var position = 0

        func failure(_ reason: String, _ path: String) -> Failure {
            Failure(reason: reason, path: path, offset: position)
        }

        mutating func skipSpace() {
            while position < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[position]) { position += 1 }
        }

        mutating func value(keys: Keys, path: String, depth: Int) throws(Failure) {
            guard depth < StrictJSON.maximumDepth else {
                throw failure("nests deeper than \(StrictJSON.maximumDepth) levels", path)
            }
            skipSpace()
            guard position < bytes.count else { throw failure("ends where a value should be", path) }
            var keys = keys
            if case .nullable(let inner) = keys {
                keys = inner
            } else if bytes[position] == UInt8(ascii: "n"), !path.isEmpty {
                throw Failure(reason: "must not be null (leave the key out to keep its value)", path: path, offset: nil)
            }
            switch bytes[position] {
            case UInt8(ascii: "{"): try object(keys: keys, path: path, depth: depth)
            case UInt8(ascii: "["): try array(keys: keys, path: path, depth: depth)
            case UInt8(ascii: "\""): _ = try string(path)
            case UInt8(ascii: "t"): try literal("true", path)
            case UInt8(ascii: "f"): try literal("false", path)
            case UInt8(ascii: "n"): try literal("null", path)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): try number(path)
            default: throw failure("has an unexpected character where a value should be", path)
            }
        }

        mutating func object(keys: Keys, path: String, depth: Int) throws(Failure) {
            position += 1
            var seen = Set<String>()
            skipSpace()
            if position < bytes.count && bytes[position] == UInt8(ascii: "}") {
                position += 1
                return
            }
            while true {
                skipSpace()
                guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else {
                    throw failure("expects a key in quotes", path)
                }
                let key = try string(path)
                let keyPath = path.isEmpty ? key : "\(path).\(key)"
                guard seen.insert(key).inserted else { throw failure("has the key '\(key)' twice", path) }
                var inner = Keys.value
                if case .object(let allowed) = keys {
                    guard let known = allowed[key] else {
                        throw Failure(
                            reason:
                                "has an unknown key '\(key)' (known: \(allowed.keys.sorted().joined(separator: ", ")))",
                            path: path, offset: nil)
                    }
                    inner = known
                }
                skipSpace()
                guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else {
                    throw failure("expects ':' after the key '\(key)'", path)
                }
                position += 1
                try value(keys: inner, path: keyPath, depth: depth + 1)
                skipSpace()
                guard position < bytes.count else { throw failure("ends inside an object", path) }
                if bytes[position] == UInt8(ascii: ",") {
                    position += 1
                    continue
                }
                guard bytes[position] == UInt8(ascii: "}") else { throw failure("expects ',' or '}'", path) }
                position += 1
                return
            }
        }

        mutating func array(keys: Keys, path: String, depth: Int) throws(Failure) {
            position += 1
            skipSpace()
            if position < bytes.count && bytes[position] == UInt8(ascii: "]") {
                position += 1
                return
            }
            var index = 0
            while true {
                // The keys apply to each element (a list of objects of one kind).
                try value(keys: keys, path: "\(path)[\(index)]", depth: depth + 1)
                index += 1
                skipSpace()
                guard position < bytes.count else { throw failure("ends inside an array", path) }
                if bytes[position] == UInt8(ascii: ",") {
                    position += 1
                    continue
                }
                guard bytes[position] == UInt8(ascii: "]") else { throw failure("expects ',' or ']'", path) }
                position += 1
                return
            }
        }

        /// A string, its escapes checked; returns its text.
        mutating func string(_ path: String) throws(Failure) -> String {
            position += 1
            var text: [UInt8] = []
            while position < bytes.count {
                let byte = bytes[position]
                switch byte {
                case UInt8(ascii: "\""):
                    position += 1
                    return String(decoding: text, as: UTF8.self)
                case UInt8(ascii: "\\"):
                    guard position + 1 < bytes.count else { throw failure("ends inside an escape", path) }
                    let escaped = bytes[position + 1]
                    position += 2
                    switch escaped {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): text.append(escaped)
                    case UInt8(ascii: "b"): text.append(0x08)
                    case UInt8(ascii: "f"): text.append(0x0C)
                    case UInt8(ascii: "n"): text.append(0x0A)
                    case UInt8(ascii: "r"): text.append(0x0D)
                    case UInt8(ascii: "t"): text.append(0x09)
                    case UInt8(ascii: "u"):
                        guard position + 4 <= bytes.count,
                            let code = UInt16(
                                String(decoding: bytes[position..<position + 4], as: UTF8.self), radix: 16)
                        else { throw failure("has a bad \\u escape", path) }
                        position += 4
                        // Keys are compared as text; a surrogate pair's halves stand for themselves.
                        text += Array(String(Character(Unicode.Scalar(code) ?? "\u{FFFD}")).utf8)
                    default:
                        throw failure("has an unknown escape", path)
                    }
                case 0x00..<0x20:
                    throw failure("has a control character inside a string", path)
                default:
                    text.append(byte)
                    position += 1
                }
            }
            throw failure("ends inside a string", path)
        }

        mutating func literal(_ word: String, _ path: String) throws(Failure) {
            let expected = Array(word.utf8)
            guard position + expected.count <= bytes.count,
                Array(bytes[position..<position + expected.count]) == expected
            else { throw failure("has an unknown word where a value should be", path) }
            position += expected.count
        }

        mutating func number(_ path: String) throws(Failure) {
            func digits() -> Int {
                let start = position
                while position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) {
                    position += 1
                }
                return position - start
            }
            if bytes[position] == UInt8(ascii: "-") { position += 1 }
            let start = position
            guard digits() > 0 else { throw failure("has a number without digits", path) }
            if bytes[start] == UInt8(ascii: "0") && position - start > 1 {
                throw failure("has a number with a leading zero", path)
            }
            if position < bytes.count && bytes[position] == UInt8(ascii: ".") {
                position += 1
                guard digits() > 0 else { throw failure("has a number without digits after '.'", path) }
            }
            if position < bytes.count && (bytes[position] == UInt8(ascii: "e") || bytes[position] == UInt8(ascii: "E"))
            {
                position += 1
                if position < bytes.count
                    && (bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-"))
                {
                    position += 1
                }
                guard digits() > 0 else { throw failure("has a number without digits in its exponent", path) }
            }
        }
    }
}
