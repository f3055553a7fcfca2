import Alerts
import Foundation

/// What each device subscribes to: its preferences.
package protocol SubscriptionStore: Sendable {
    func preferences(deviceID: UUID) async throws -> Preferences?
    /// Replaces the preferences (already validated); false when there is no such device.
    func updatePreferences(deviceID: UUID, to preferences: Preferences) async throws -> Bool
    /// Active devices with `team` among their favourites.
    func deviceIDs(favouring team: String) async throws -> [UUID]
}
