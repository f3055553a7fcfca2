import Alerts
import Delivery
import Foundation
import Synchronization

/// The channel management clients of the apps the service pushes for, one per app and
/// environment, made when first needed, with the app's provider token (its own key, or the
/// server's). Management goes to Apple's `api-manage-broadcast` hosts beside Apple's push hosts,
/// and to the push URL itself for any other (`nohit fake-apns` serves both).
package final class BroadcastClients: Sendable {
    package typealias App = BroadcastApp

    private let make: @Sendable (App) throws -> APNsBroadcastClient?
    private let made = Mutex<[App: APNsBroadcastClient]>([:])
    /// The channels kept, by key, as the broadcast channels' last round read them (the first made
    /// of two): what the route gives an app, and what a push-to-start names.
    private let kept = Mutex<[BroadcastChannelPlan.Key: String]>([:])

    package init(make: @escaping @Sendable (App) throws -> APNsBroadcastClient?) {
        self.make = make
    }

    /// Apple's management hosts.
    package static let appleManagement: [APNsEnvironment: String] = [
        .production: "https://api-manage-broadcast.push.apple.com:2196",
        .sandbox: "https://api-manage-broadcast.sandbox.push.apple.com:2195",
    ]

    /// Where `environment`'s channels are managed, for the push URL `pushURL`: Apple's management
    /// host beside Apple's push hosts (however the URL is written), the push URL itself otherwise.
    package static func managementURL(pushURL: String, environment: APNsEnvironment) -> String {
        let host = URLComponents(string: pushURL)?.host?.lowercased()
        let apple = ["api.push.apple.com", "api.sandbox.push.apple.com", "api.development.push.apple.com"]
        return host.map(apple.contains) ?? false ? appleManagement[environment]! : pushURL
    }

    /// The client for `app`; nil when the service has no key for it; throws when it cannot be made.
    package func client(for app: App) throws -> APNsBroadcastClient? {
        if let known = made.withLock({ $0[app] }) { return known }
        guard let client = try make(app) else { return nil }
        return made.withLock { made in
            if let known = made[app] {
                Task { await client.shutdown() }
                return known
            }
            made[app] = client
            return client
        }
    }

    /// The channel kept for `key`, as the last round found it.
    package func channel(for key: BroadcastChannelPlan.Key) -> String? { kept.withLock { $0[key] } }

    /// The channels kept now, by key.
    package func keep(_ channels: [BroadcastChannelPlan.Key: String]) { kept.withLock { $0 = channels } }

    package func shutdown() async {
        for client in made.withLock({ Array($0.values) }) { await client.shutdown() }
    }
}

/// An app in an environment: whose channels one management client serves.
package struct BroadcastApp: Sendable, Hashable {
    package var topic: String
    package var environment: APNsEnvironment

    package init(topic: String, environment: APNsEnvironment) {
        self.topic = topic
        self.environment = environment
    }
}
