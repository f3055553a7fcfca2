import Alerts
import Foundation

/// Prints alerts: the demo's channel.
package struct ConsoleChannel: DeliveryChannel {
    package let kind = ChannelKind.console
    let write: @Sendable (String) -> Void

    package init(write: @escaping @Sendable (String) -> Void = { print($0) }) {
        self.write = write
    }

    package func deliver(_ delivery: OutboundDelivery) async -> ProviderOutcome {
        guard case .console(let label) = delivery.channel else { return .rejected(status: 0, reason: "not a console") }
        write("[\(label)] " + String(decoding: delivery.payload, as: UTF8.self))
        return .accepted
    }
}
