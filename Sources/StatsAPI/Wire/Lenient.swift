import Foundation

/// A value read on its own: a malformed one is kept as the reason rather than failing its parent.
package enum Lenient<Value: Codable & Sendable & Hashable>: Codable, Sendable, Hashable {
    case value(Value)
    case malformed(String)

    package var value: Value? {
        if case .value(let value) = self { return value }
        return nil
    }

    package init(from decoder: any Decoder) throws {
        do {
            self = .value(try Value(from: decoder))
        } catch {
            // Named from the value itself: its own place is the parent's to say.
            self = .malformed(Self.describe(error, droppingFirst: decoder.codingPath.count))
        }
    }

    package func encode(to encoder: any Encoder) throws {
        switch self {
        case .value(let value): try value.encode(to: encoder)
        case .malformed(let reason):
            var container = encoder.singleValueContainer()
            try container.encode(["malformed": reason])
        }
    }

    /// A decoding error as "what, where": `missing details.type.code`.
    package static func describe(_ error: any Error, droppingFirst prefix: Int = 0) -> String {
        func path(_ all: [any CodingKey]) -> String {
            let keys = Array(all.dropFirst(prefix))
            return keys.isEmpty
                ? "the value"
                : keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
                    .replacingOccurrences(of: ".[", with: "[")
        }
        switch error {
        case DecodingError.keyNotFound(let key, let context): return "missing \(path(context.codingPath + [key]))"
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context),
            DecodingError.dataCorrupted(let context):
            return "\(path(context.codingPath)): \(context.debugDescription)"
        default: return "\(error)"
        }
    }
}
