import Foundation
import JSON

/// `feed/live/diffPatch?startTimecode=T`: patches since T, or a whole feed when the server
/// decides that is simpler.
package enum DiffPatchResponse: Sendable, Hashable {
    case patches([JSONPatch])
    case feed(JSONValue)

    package init(_ document: JSONValue) throws {
        switch document {
        case .array(let items):
            var patches: [JSONPatch] = []
            for (index, item) in items.enumerated() {
                guard let diff = item["diff"] else {
                    throw StatsAPIError.unexpectedShape("diffPatch response item \(index) has no \"diff\"")
                }
                patches.append(try JSONPatch(diff))
            }
            self = .patches(patches)
        case .object(let object) where object["gamePk"] != nil && object["liveData"] != nil:
            self = .feed(document)
        default:
            throw StatsAPIError.unexpectedShape("a diffPatch response is an array of {\"diff\": [...]} or a live feed")
        }
    }
}
