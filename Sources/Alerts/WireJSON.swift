import Foundation

/// The one way the service writes JSON for its clients: the API's answers, the live stream's
/// events and every push payload (APNs, Live Activities, Web Push, webhooks) encode their values
/// with this encoder, so a moment has one shape wherever it goes: keys in snake case and sorted,
/// dates in ISO 8601, `/` not escaped.
package enum WireJSON {
    package static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        encoder.keyEncodingStrategy = .convertToSnakeCase
        return encoder
    }()
}
