import Foundation
import Logging
import Storage

/// The hourly listing of each app's channels on APNs, and the deletion of the leaks a stop left.
extension BroadcastChannels {
    /// Lists each app's channels (those of the service's channels and iOS devices). When a stop
    /// left an intent, the channels no device keeps at two listings in a row are deleted, and the
    /// intents too; without one, they are another's and left alone.
    package func sweep() async throws {
        let devices = try await directory.active()
        let (kept, intents) = Self.channels(among: devices)
        let now = clock.now()
        let stale = intents.filter { now.timeIntervalSince($0.device.registeredAt) >= settings.leakGrace }
        let keptIDs = Set(kept.map(\.id))
        var apps = Set((kept + intents).map { App(topic: $0.key.topic, environment: $0.key.environment) })
        // Turned off, only the apps that still have channels or intents are listed: an app turned
        // off for want of the Broadcast capability would fail every listing.
        for device in devices where settings.makesChannels {
            if let app = device.channel.apnsApp { apps.insert(App(topic: app.topic, environment: app.environment)) }
        }
        var unkept = Set<String>()
        var others = 0
        for app in apps.sorted(by: { ($0.topic, $0.environment.rawValue) < ($1.topic, $1.environment.rawValue) }) {
            let staleHere = stale.contains { $0.key.topic == app.topic && $0.key.environment == app.environment }
            do {
                guard let client = try clients.client(for: app) else { continue }
                for id in try await client.allChannels() where !keptIDs.contains(id) {
                    guard staleHere else {
                        others += 1
                        continue
                    }
                    if state.withLock({ $0.suspects.contains(id) }) {
                        if try await client.deleteChannel(id) {
                            state.withLock { $0.counts.leaksDeleted += 1 }
                            logger.notice(
                                "broadcast channel kept by no device (left by a stop while making it): deleted",
                                metadata: ["channel": "\(id)", "app": "\(app.topic)"])
                        }
                    } else {
                        unkept.insert(id)
                    }
                }
            } catch {
                state.withLock { $0.counts.failures += 1 }
                logger.warning(
                    "broadcast channels of \(app.topic) (\(app.environment.rawValue)) not listed now; at the next sweep",
                    metadata: ["error": "\(PostgresStore.describe(error))"])
                continue
            }
        }
        if others > 0 { logger.info("channels of the apps not made by this service are left alone: \(others)") }
        state.withLock {
            $0.suspects = unkept
            // Those found now are looked at again a grace later, not an hour.
            if !unkept.isEmpty { $0.nextSweep = now.addingTimeInterval(settings.leakGrace) }
        }
        // Every leak of a stale intent is gone (or none was left): the intents end.
        if unkept.isEmpty {
            for intent in stale {
                _ = try await store.disable(
                    id: intent.device.id, reason: "broadcast channel not made: the service stopped while making it",
                    at: now)
            }
        }
    }
}
