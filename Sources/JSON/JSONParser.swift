import Foundation

// MARK: - Parsing

/// Why a document is not JSON: what and where (byte offset).
public struct JSONSyntaxError: Error, Sendable, Hashable, CustomStringConvertible {
    public var reason: String
    public var offset: Int
    public var description: String { "\(reason) at byte \(offset)" }
}

extension JSONValue {
    /// Nesting deeper than this is refused (a stack-safe bound; Keen's events are shallow).
    public static let maximumDepth = 64

    /// Parses RFC 8259 JSON (UTF-8; a leading byte-order mark is skipped), refusing a key twice in
    /// one object and nesting deeper than `maximumDepth`.
    public static func parse(_ bytes: some Collection<UInt8>) throws(JSONSyntaxError) -> JSONValue {
        let array = Array(bytes)
        return try array.withUnsafeBufferPointer { buffer throws(JSONSyntaxError) in
            var parser = JSONParser(bytes: buffer)
            if buffer.count >= 3, buffer[0] == 0xEF, buffer[1] == 0xBB, buffer[2] == 0xBF { parser.position = 3 }
            parser.skipSpace()
            let value = try parser.value(depth: 0)
            parser.skipSpace()
            guard parser.position == buffer.count else { throw parser.failure("more after the document") }
            return value
        }
    }

    public static func parse(_ text: String) throws(JSONSyntaxError) -> JSONValue {
        try parse(Array(text.utf8))
    }
}

extension JSONValue {
    /// How many elements a batch's lists hold (`{"name": [value, ...], ...}`), counted without
    /// building them, so a batch past its limit is refused before it costs a parse; `nil` when the
    /// bytes are not of that shape (a parse then says why).
    public static func batchElementCount(_ bytes: [UInt8]) -> Int? {
        bytes.withUnsafeBufferPointer { buffer in
            var skimmer = JSONSkimmer(bytes: buffer)
            if buffer.count >= 3, buffer[0] == 0xEF, buffer[1] == 0xBB, buffer[2] == 0xBF { skimmer.position = 3 }
            skimmer.skipSpace()
            guard skimmer.take(UInt8(ascii: "{")) else { return nil }
            var total = 0
            if skimmer.take(UInt8(ascii: "}")) { return skimmer.atEnd ? 0 : nil }
            while true {
                guard skimmer.next == UInt8(ascii: "\""), skimmer.skipString(), skimmer.take(UInt8(ascii: ":")),
                    skimmer.take(UInt8(ascii: "["))
                else { return nil }
                if !skimmer.take(UInt8(ascii: "]")) {
                    while true {
                        guard skimmer.skipValue(depth: 2) else { return nil }
                        total += 1
                        skimmer.skipSpace()
                        if skimmer.take(UInt8(ascii: ",")) { continue }
                        guard skimmer.take(UInt8(ascii: "]")) else { return nil }
                        break
                    }
                }
                if skimmer.take(UInt8(ascii: ",")) { continue }
                guard skimmer.take(UInt8(ascii: "}")) else { return nil }
                return skimmer.atEnd ? total : nil
            }
        }
    }
}

/// Where the JSON white space starting at `position` ends.
private func jsonSpaceEnd(_ bytes: UnsafeBufferPointer<UInt8>, from position: Int) -> Int {
    var position = position
    while position < bytes.count {
        switch bytes[position] {
        case 0x20, 0x09, 0x0A, 0x0D: position += 1
        default: return position
        }
    }
    return position
}

/// Walks a document's structure without building its values (strings and numbers are skipped,
/// not checked: a parse checks what is kept).
private struct JSONSkimmer {
    let bytes: UnsafeBufferPointer<UInt8>
    var position = 0

    var next: UInt8? { position < bytes.count ? bytes[position] : nil }

    /// Whether the document, past spaces, ends here.
    var atEnd: Bool {
        mutating get {
            skipSpace()
            return position == bytes.count
        }
    }

    mutating func skipSpace() { position = jsonSpaceEnd(bytes, from: position) }

    /// Past spaces, takes `byte` (and the spaces after it) if it is next.
    mutating func take(_ byte: UInt8) -> Bool {
        skipSpace()
        guard next == byte else { return false }
        position += 1
        skipSpace()
        return true
    }

    mutating func skipString() -> Bool {
        position += 1
        while position < bytes.count {
            switch bytes[position] {
            case UInt8(ascii: "\""):
                position += 1
                return true
            case UInt8(ascii: "\\"): position += 2
            default: position += 1
            }
        }
        return false
    }

    mutating func skipValue(depth: Int) -> Bool {
        guard let first = next, depth <= JSONValue.maximumDepth else { return false }
        switch first {
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            let isObject = first == UInt8(ascii: "{")
            let close = isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")
            position += 1
            if take(close) { return true }
            while true {
                if isObject {
                    guard next == UInt8(ascii: "\""), skipString(), take(UInt8(ascii: ":")) else { return false }
                }
                guard skipValue(depth: depth + 1) else { return false }
                if take(UInt8(ascii: ",")) { continue }
                return take(close)
            }
        case UInt8(ascii: "\""): return skipString()
        default:
            let start = position
            scalar: while position < bytes.count {
                switch bytes[position] {
                case UInt8(ascii: ","), UInt8(ascii: "]"), UInt8(ascii: "}"), 0x20, 0x09, 0x0A, 0x0D: break scalar
                default: position += 1
                }
            }
            return position > start
        }
    }
}

private struct JSONParser {
    let bytes: UnsafeBufferPointer<UInt8>
    var position = 0

    func failure(_ reason: String) -> JSONSyntaxError { JSONSyntaxError(reason: reason, offset: position) }

    mutating func skipSpace() { position = jsonSpaceEnd(bytes, from: position) }

    mutating func value(depth: Int) throws(JSONSyntaxError) -> JSONValue {
        guard position < bytes.count else { throw failure("the document ends where a value was expected") }
        switch bytes[position] {
        case UInt8(ascii: "{"): return .object(try object(depth: depth + 1))
        case UInt8(ascii: "["): return .array(try array(depth: depth + 1))
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
        default: throw failure("unexpected character '\(Character(Unicode.Scalar(bytes[position])))'")
        }
    }

    mutating func literal(_ word: String) throws(JSONSyntaxError) {
        let utf8 = Array(word.utf8)
        guard position + utf8.count <= bytes.count else { throw failure("unexpected end of the document") }
        for index in 0..<utf8.count where bytes[position + index] != utf8[index] {
            throw failure("unexpected character")
        }
        position += utf8.count
    }

    mutating func object(depth: Int) throws(JSONSyntaxError) -> JSONObject {
        guard depth <= JSONValue.maximumDepth else { throw failure("nested deeper than \(JSONValue.maximumDepth)") }
        position += 1
        var members: [(key: String, value: JSONValue)] = []
        // Keys seen, in a set once an object has more than a few (below that, a look along the
        // members costs less than hashing every key).
        var seen: Set<String>? = nil
        skipSpace()
        if position < bytes.count, bytes[position] == UInt8(ascii: "}") {
            position += 1
            return JSONObject(members)
        }
        while true {
            skipSpace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else {
                throw failure("expected a key in quotes")
            }
            let keyStart = position
            let key = try string()
            let repeated: Bool
            if seen != nil {
                repeated = !seen!.insert(key).inserted
            } else if members.count < 8 {
                repeated = members.contains { $0.key == key }
            } else {
                seen = Set(members.map(\.key))
                repeated = !seen!.insert(key).inserted
            }
            guard !repeated else {
                throw JSONSyntaxError(reason: "the key \"\(key)\" appears twice in one object", offset: keyStart)
            }
            skipSpace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else { throw failure("expected ':'") }
            position += 1
            skipSpace()
            members.append((key, try value(depth: depth)))
            skipSpace()
            guard position < bytes.count else { throw failure("the document ends inside an object") }
            if bytes[position] == UInt8(ascii: ",") {
                position += 1
            } else if bytes[position] == UInt8(ascii: "}") {
                position += 1
                return JSONObject(members)
            } else {
                throw failure("expected ',' or '}'")
            }
        }
    }

    mutating func array(depth: Int) throws(JSONSyntaxError) -> [JSONValue] {
        guard depth <= JSONValue.maximumDepth else { throw failure("nested deeper than \(JSONValue.maximumDepth)") }
        position += 1
        var elements: [JSONValue] = []
        skipSpace()
        if position < bytes.count, bytes[position] == UInt8(ascii: "]") {
            position += 1
            return elements
        }
        while true {
            skipSpace()
            elements.append(try value(depth: depth))
            skipSpace()
            guard position < bytes.count else { throw failure("the document ends inside a list") }
            if bytes[position] == UInt8(ascii: ",") {
                position += 1
            } else if bytes[position] == UInt8(ascii: "]") {
                position += 1
                return elements
            } else {
                throw failure("expected ',' or ']'")
            }
        }
    }

    mutating func string() throws(JSONSyntaxError) -> String {
        position += 1
        let start = position
        // The common case: no escapes, one slice of valid UTF-8 (ASCII, most often: nothing to
        // validate).
        var ascii = true
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                let slice = UnsafeBufferPointer(rebasing: bytes[start..<position])
                position += 1
                if ascii { return String(decoding: slice, as: UTF8.self) }
                guard let text = String(validating: slice, as: UTF8.self) else {
                    throw JSONSyntaxError(reason: "a string that is not UTF-8", offset: start)
                }
                return text
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw failure("a control character inside a string") }
            if byte >= 0x80 { ascii = false }
            position += 1
        }
        var utf8 = Array(bytes[start..<position])
        while position < bytes.count {
            let byte = bytes[position]
            switch byte {
            case UInt8(ascii: "\""):
                position += 1
                guard let text = String(validating: utf8, as: UTF8.self) else {
                    throw JSONSyntaxError(reason: "a string that is not UTF-8", offset: start)
                }
                return text
            case UInt8(ascii: "\\"):
                position += 1
                guard position < bytes.count else { throw failure("the document ends inside a string") }
                let escape = bytes[position]
                position += 1
                switch escape {
                case UInt8(ascii: "\""): utf8.append(0x22)
                case UInt8(ascii: "\\"): utf8.append(0x5C)
                case UInt8(ascii: "/"): utf8.append(0x2F)
                case UInt8(ascii: "b"): utf8.append(0x08)
                case UInt8(ascii: "f"): utf8.append(0x0C)
                case UInt8(ascii: "n"): utf8.append(0x0A)
                case UInt8(ascii: "r"): utf8.append(0x0D)
                case UInt8(ascii: "t"): utf8.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hex4()
                    if (0xD800..<0xDC00).contains(scalar) {
                        guard position + 1 < bytes.count, bytes[position] == UInt8(ascii: "\\"),
                            bytes[position + 1] == UInt8(ascii: "u")
                        else { throw failure("a lone surrogate in \\u escapes") }
                        position += 2
                        let low = try hex4()
                        guard (0xDC00..<0xE000).contains(low) else { throw failure("a lone surrogate in \\u escapes") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00..<0xE000).contains(scalar) {
                        throw failure("a lone surrogate in \\u escapes")
                    }
                    utf8.append(contentsOf: String(Character(Unicode.Scalar(scalar)!)).utf8)
                default: throw failure("an unknown escape")
                }
            default:
                if byte < 0x20 { throw failure("a control character inside a string") }
                utf8.append(byte)
                position += 1
            }
        }
        throw failure("the document ends inside a string")
    }

    mutating func hex4() throws(JSONSyntaxError) -> UInt32 {
        guard position + 4 <= bytes.count else { throw failure("a short \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[position]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw failure("a bad \\u escape")
            }
            value = value << 4 | digit
            position += 1
        }
        return value
    }

    mutating func number() throws(JSONSyntaxError) -> Double {
        let start = position
        if bytes[position] == UInt8(ascii: "-") { position += 1 }
        guard position < bytes.count else { throw failure("a number without digits") }
        if bytes[position] == UInt8(ascii: "0") {
            position += 1
        } else if (UInt8(ascii: "1")...UInt8(ascii: "9")).contains(bytes[position]) {
            while position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) {
                position += 1
            }
        } else {
            throw failure("a number without digits")
        }
        var integral = true
        if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
            integral = false
            position += 1
            let digits = position
            while position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) {
                position += 1
            }
            guard position > digits else { throw failure("a fraction without digits") }
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: "e") || bytes[position] == UInt8(ascii: "E") {
            integral = false
            position += 1
            if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") {
                position += 1
            }
            let digits = position
            while position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) {
                position += 1
            }
            guard position > digits else { throw failure("an exponent without digits") }
        }
        // Short integers, the usual case, without going through text.
        if integral, position - start <= 15 {
            var value: Int64 = 0
            var index = start
            let negative = bytes[index] == UInt8(ascii: "-")
            if negative { index += 1 }
            while index < position {
                value = value * 10 + Int64(bytes[index] - UInt8(ascii: "0"))
                index += 1
            }
            return Double(negative ? -value : value)
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
        guard let value = Double(text), value.isFinite else {
            throw JSONSyntaxError(reason: "a number out of range", offset: start)
        }
        return value
    }
}
