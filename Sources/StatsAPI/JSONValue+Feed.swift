import Foundation
import JSON

/// The service's one JSON value (``JSON/JSONValue``) as the Stats API's live feed is kept between
/// polls: parsed from an answer, a diffPatch response applied to it, the typed feed read from it.
extension JSONValue {
    /// Parses JSON text.
    package init(parsing data: some Collection<UInt8>) throws {
        self = try JSONValue.parse(data)
    }

    /// The document as JSON text (members in their order: the same document gives the same bytes).
    package func encoded() -> Data {
        Data(jsonBytes)
    }

    package subscript(index: Int) -> JSONValue? {
        if case .array(let array) = self, array.indices.contains(index) { return array[index] }
        return nil
    }

    /// The value at a JSON Pointer (RFC 6901), if there is one.
    package func value(at pointer: JSONPointer) -> JSONValue? {
        var current = self
        for token in pointer.tokens {
            switch current {
            case .object(let object):
                guard let next = object[token] else { return nil }
                current = next
            case .array(let array):
                guard let index = JSONPointer.index(token), array.indices.contains(index) else { return nil }
                current = array[index]
            default:
                return nil
            }
        }
        return current
    }
}
