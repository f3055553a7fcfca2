import Alerts
import Baseball
import Foundation

/// A store operation that cannot be done.
package enum StoreError: Error, Sendable, Hashable, CustomStringConvertible {
    case duplicate(String)
    case corrupt(String)
    /// The store cannot be opened as configured (a malformed URL, a database that cannot be reached).
    case configuration(String)
    /// A request the store refuses: what and why.
    case invalid(String)

    package var description: String {
        switch self {
        case .duplicate(let what): "already exists: \(what)"
        case .corrupt(let what): "stored data cannot be read: \(what)"
        case .configuration(let what), .invalid(let what): what
        }
    }
}

/// Every store protocol the service runs on.
package typealias ServiceStore = DeviceStore & SubscriptionStore & MomentStore & OutboxStore & DealStore & FeedbackStore
