import Alerts
import Foundation

/// One message to one device, as the outbox hands it to a channel.
package struct OutboundDelivery: Sendable, Hashable {
    /// UUIDv5 of moment id and device id: `apns-id`, `webhook-id`; the same on every retry.
    package var id: UUID
    package var deviceID: UUID
    package var channel: DeviceChannel
    /// The channel's payload (APNs JSON, Web Push plaintext, webhook body).
    package var payload: Data
    /// Groups a bid's alerts: `apns-collapse-id`, Web Push `Topic`.
    package var collapseKey: String
    /// When the moment happened.
    package var createdAt: Date
    /// After this the alert is stale (`apns-expiration`, Web Push `TTL`).
    package var expiresAt: Date
    /// The last moment it may be put on the wire (half its claim's lease; nil: any time). A
    /// process held up past it (paused, starved) may have lost the claim to another instance: it
    /// is not sent, but answered ``ProviderOutcome/notSent(reason:)``, and the dispatcher sends it
    /// again if its lease still holds as renewed since, or gives it back.
    package var sendBy: ContinuousClock.Instant?

    package init(
        id: UUID, deviceID: UUID, channel: DeviceChannel, payload: Data, collapseKey: String, createdAt: Date,
        expiresAt: Date, sendBy: ContinuousClock.Instant? = nil
    ) {
        self.id = id
        self.deviceID = deviceID
        self.channel = channel
        self.payload = payload
        self.collapseKey = collapseKey
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.sendBy = sendBy
    }

    /// Whether its time to be put on the wire has passed (see `sendBy`).
    package var isPastSendBy: Bool { Self.hasPassed(sendBy) }

    /// Whether a time to be put on the wire (`sendBy`, carried on each request made of a delivery)
    /// has passed; never, without one.
    static func hasPassed(_ sendBy: ContinuousClock.Instant?) -> Bool {
        sendBy.map { ContinuousClock.now >= $0 } ?? false
    }

    /// What a delivery not put on the wire in time is answered.
    package static let notSent = ProviderOutcome.notSent(
        reason: "its time to be sent had passed (this process was held up): sent again if its claim still holds")
}

/// Told each delivery's outcome as its answer arrives: its index in the batch sent, and what
/// the provider said. Called from any thread, once per delivery.
package typealias OutcomeReport = @Sendable (_ index: Int, _ outcome: ProviderOutcome) -> Void

/// A way to reach devices: APNs, Web Push, webhooks, the console.
package protocol DeliveryChannel: Sendable {
    var kind: ChannelKind { get }
    /// Sends one delivery and classifies what the provider said. Never throws: failures are
    /// outcomes.
    func deliver(_ delivery: OutboundDelivery) async -> ProviderOutcome
    /// Sends every one of `deliveries`; `report` gets each outcome as it comes. Returns once every
    /// request is on its way (a transport that answers through callbacks, as the lean HTTP/2 client
    /// does) or answered. The dispatcher's path, run in a child task of its own: a channel that can
    /// put many requests on the wire in one step does so; the default sends each with
    /// `deliver(_:)` in a child task.
    func send(_ deliveries: [OutboundDelivery], report: @escaping OutcomeReport) async
    /// The provider rejected the credentials as expired: make new ones (APNs JWT), unless the
    /// ones it rejected were already replaced. Returns whether new ones were made.
    func refreshCredentials() async -> Bool
}

extension DeliveryChannel {
    package func refreshCredentials() async -> Bool { false }

    package func send(_ deliveries: [OutboundDelivery], report: @escaping OutcomeReport) async {
        await withTaskGroup(of: Void.self) { group in
            for (index, delivery) in deliveries.enumerated() {
                group.addTask {
                    report(index, delivery.isPastSendBy ? OutboundDelivery.notSent : await deliver(delivery))
                }
            }
        }
    }
}
