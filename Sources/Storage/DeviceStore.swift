import Alerts
import Foundation

/// Registered devices.
package protocol DeviceStore: Sendable {
    /// Stores a new device. Throws `StoreError.duplicate` when the id exists.
    ///
    /// A push address is one person's: an active device with the same APNs or Live Activity token
    /// (and topic) or the same Web Push endpoint is the same app registering again (reinstalled,
    /// its id lost), so it is disabled in the same transaction (reason "replaced by device …"), and
    /// its id returned: one phone never gets an alert twice. Webhooks and consoles may share an
    /// address (one endpoint, several preference sets).
    @discardableResult
    func register(_ device: Device) async throws -> [UUID]
    /// Stores many new devices in one transaction: all or none (a duplicate id, or two of them with
    /// one push address, refuses them all); the ids of the devices they replace, as `register`.
    @discardableResult
    func register(contentsOf devices: [Device]) async throws -> [UUID]
    func device(id: UUID) async throws -> Device?
    /// The hash of the device's secret, nil for no such device: what authentication compares,
    /// read without opening the device's sealed columns (so a wrong secret costs the same whether
    /// the device exists or not).
    func secretHash(deviceID: UUID) async throws -> String?
    /// Replaces the device's channel address (an APNs or Live Activity token rotated, a
    /// subscription renewed) and re-activates it; false when there is no such device. Another
    /// active device holding that push address is replaced, as in `register`.
    func updateChannel(id: UUID, to channel: DeviceChannel, at date: Date) async throws -> Bool
    /// `updateChannel`, only while the device is active and its address is still `address` (a
    /// broadcast channel's intent given the channel's id): false otherwise, nothing changed.
    func keepChannel(id: UUID, address: String, to channel: DeviceChannel, at date: Date) async throws -> Bool
    /// Stops sending to the device; false when there is no such device.
    func disable(id: UUID, reason: String, at date: Date) async throws -> Bool
    func delete(id: UUID) async throws -> Bool
    /// Every active device.
    func activeDevices() async throws -> [Device]
    func deviceCount() async throws -> Int
    /// Answers when the database does (a trivial read): `/readyz`'s check.
    func ping() async throws
    /// A number that changes whenever a device is added, changed (channel, preferences, status)
    /// or removed, by this process or another one sharing the store.
    func devicesVersion() async throws -> Int
    /// Devices added or changed after `version` (active or not), or every active device when nil,
    /// with the current version and the number of devices ever removed — read together.
    func deviceChanges(after version: Int?) async throws -> DeviceChanges
}

/// What changed among the devices since a version.
package struct DeviceChanges: Sendable {
    package var version: Int
    /// Devices deleted so far: when this moves, a reader reads everything again.
    package var removals: Int
    package var devices: [Device]

    package init(version: Int, removals: Int, devices: [Device]) {
        self.version = version
        self.removals = removals
        self.devices = devices
    }
}
