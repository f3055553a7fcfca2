import Delivery
import Foundation
import Synchronization

/// The providers that refused this server's configuration since it started (a key, team, topic
/// or environment that does not fit): each provider and cause once, with what to do, for the log
/// (said once, at the default level), `/readyz` (degraded while any is known) and the replay's
/// summary. A start with the configuration mended begins with none.
package final class DeliveryFaults: Sendable {
    /// One provider refusing for one cause.
    package struct Fault: Sendable, Hashable {
        /// `apns`, `live-activity`, …
        package var channel: String
        /// The app: its topic (bundle id) and environment.
        package var provider: String
        /// The provider's reason (`InvalidProviderToken`).
        package var reason: String
        /// Deliveries held for it since start.
        package var held: Int

        /// The sentence the log and `/readyz` say.
        package var description: String {
            "\(channel) refuses \(provider): \(reason) — \(ProviderOutcome.configurationFix(for: reason)); "
                + "\(held) \(held == 1 ? "delivery" : "deliveries") held until a restart with it mended"
        }
    }

    private let faults = Mutex<[String: Fault]>([:])
    /// Providers and causes kept at most.
    static let limit = 64

    package init() {}

    /// A delivery held for `reason` from `provider`; true the first time this provider and cause
    /// are seen (the caller logs it).
    package func held(channel: String, provider: String, reason: String) -> Bool {
        faults.withLock { faults in
            let key = "\(channel) \(provider) \(reason)"
            if faults[key] != nil {
                faults[key]!.held += 1
                return false
            }
            // Bounded: the apps an operator declares are few.
            guard faults.count < Self.limit else { return false }
            faults[key] = Fault(channel: channel, provider: provider, reason: reason, held: 1)
            return true
        }
    }

    /// Every fault since start, by provider.
    package var all: [Fault] {
        faults.withLock { faults in
            faults.values.sorted { ($0.channel, $0.provider, $0.reason) < ($1.channel, $1.provider, $1.reason) }
        }
    }
}
