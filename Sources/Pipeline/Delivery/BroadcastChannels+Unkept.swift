import Alerts
import Foundation
import Storage

/// A channel APNs made whose keeping (its intent given its id) the database failed: the next
/// rounds keep it, so the bid has its channel once the database is back, rather than none until
/// the sweep deletes the unkept one a grace or two later and a later moment of the bid, if any,
/// makes another. Meanwhile its intent, young, keeps every round from making the key again.
extension BroadcastChannels {
    struct Made: Sendable {
        var intent: Device
        var id: String
        var key: Key
        var app: App

        var channel: DeviceChannel {
            .liveActivityChannel(id: id, bid: key.bid, environment: key.environment, topic: key.topic)
        }
    }

    /// A channel made and kept: counted and said.
    func kept(_ made: Made) {
        state.withLock {
            $0.counts.created += 1
            $0.backoff[made.app] = nil
        }
        logger.info("broadcast channel made", metadata: ["channel": "\(made.id)", "for": "\(made.key)"])
    }

    /// Keeps the channels made that the database failed to keep, while their intents are younger
    /// than the grace. Past it, a sweep may end the intent and delete the channel as a leak, and
    /// a round may make the key again: the channel is deleted here instead, and its intent ended
    /// (if APNs cannot be asked, both are the sweep's: a channel kept by no device, a stale
    /// intent). Whether any was kept.
    func keepUnkept() async throws -> Bool {
        var any = false
        while let made = state.withLock({ $0.unkept.first }) {
            if clock.now().timeIntervalSince(made.intent.registeredAt) < settings.leakGrace {
                if try await store.updateChannel(id: made.intent.id, to: made.channel, at: clock.now()) {
                    kept(made)
                    any = true
                }
            } else {
                logger.warning(
                    "broadcast channel made as the database failed, not kept within the grace: deleted",
                    metadata: ["channel": "\(made.id)", "for": "\(made.key)"])
                if let client = try? clients.client(for: made.app), (try? await client.deleteChannel(made.id)) == true {
                    _ = try await store.disable(
                        id: made.intent.id, reason: "broadcast channel deleted: not kept within the grace",
                        at: clock.now())
                }
            }
            state.withLock { $0.unkept.removeAll { $0.intent.id == made.intent.id } }
        }
        return any
    }
}
