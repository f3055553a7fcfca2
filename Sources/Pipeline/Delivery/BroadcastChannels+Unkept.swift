import Alerts
import Foundation
import Storage

/// A channel APNs made whose keeping (its intent given the channel's id) the database failed: the
/// next rounds keep it, so the bid has its channel once the database is back, rather than none
/// until the sweep deletes the unkept one a grace or two later and a later moment of the bid, if
/// any, makes another. Meanwhile its intent, young, keeps every round from making the key again.
extension BroadcastChannels {
    struct Made: Sendable {
        var intent: Device
        var id: String
        var key: Key
        var app: App

        var channel: DeviceChannel {
            .liveActivityChannel(id: id, bid: key.bid, environment: key.environment, topic: key.topic)
        }

        /// The intent's address, which only the one keeping it replaces.
        var intentAddress: String {
            guard case .liveActivityChannel(let id, _, _, _) = intent.channel else { return "" }
            return id
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

    /// Keeps the channels made that the database failed to keep (``keep(_:)``), each taken out
    /// before it is awaited, so that a round given up on and the round after it never handle the
    /// same one; put back when the database fails again. One failing otherwise is left to the
    /// sweep (a channel kept by no device, a stale intent) rather than failing every round. Whether
    /// any was kept.
    func keepUnkept() async throws -> Bool {
        var any = false
        while let made = state.withLock({ $0.unkept.isEmpty ? nil : $0.unkept.removeFirst() }) {
            do {
                any = try await keep(made) || any
            } catch {
                if StorageFault(error) != nil || error is CancellationError {
                    state.withLock { $0.unkept.insert(made, at: 0) }
                    throw error
                }
                state.withLock { $0.counts.failures += 1 }
                logger.warning(
                    "broadcast channel made as the database failed: left to the sweep",
                    metadata: ["channel": "\(made.id)", "for": "\(made.key)", "error": "\(error)"])
            }
        }
        return any
    }

    /// Keeps one while its intent is younger than half the grace, and only while the intent is
    /// still active and still an intent: the sweep deletes a channel no device keeps only at two
    /// listings a grace apart once the intent is past the grace, so a keep that lands late still
    /// lands before. Otherwise, unless an earlier keep landed after all (a write whose answer was
    /// lost), the channel is deleted from APNs and its intent ended; the bid's moment, noted again,
    /// makes another. Whether it is kept.
    private func keep(_ made: Made) async throws -> Bool {
        let now = clock.now()
        if now.timeIntervalSince(made.intent.registeredAt) < settings.leakGrace / 2,
            try await store.keepChannel(id: made.intent.id, address: made.intentAddress, to: made.channel, at: now)
        {
            kept(made)
            return true
        }
        let device = try await store.device(id: made.intent.id)
        if let device, device.status == .active, device.channel == made.channel {
            kept(made)
            return true
        }
        logger.warning(
            "broadcast channel made as the database failed, not kept in time: deleted",
            metadata: ["channel": "\(made.id)", "for": "\(made.key)"])
        do {
            if let client = try clients.client(for: made.app) { _ = try await client.deleteChannel(made.id) }
        } catch {
            // Both are the sweep's then, brought forward: a channel kept by no device, a stale intent.
            let next = clock.now().addingTimeInterval(settings.leakGrace + 1)
            state.withLock { $0.nextSweep = min($0.nextSweep ?? next, next) }
            return false
        }
        // The intent as read above (only this round holds it now): ended, if it still is one.
        if let device, device.status == .active, device.channel == made.intent.channel {
            _ = try await store.disable(
                id: made.intent.id, reason: "broadcast channel deleted: not kept in time", at: clock.now())
        }
        return false
    }
}
