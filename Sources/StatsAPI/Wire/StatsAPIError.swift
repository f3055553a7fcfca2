import Foundation

/// Problems with a Stats API response that are not JSON syntax or a missing field.
package enum StatsAPIError: Error, Sendable, Hashable, CustomStringConvertible {
    case unexpectedShape(String)

    package var description: String {
        switch self {
        case .unexpectedShape(let what): what
        }
    }
}
