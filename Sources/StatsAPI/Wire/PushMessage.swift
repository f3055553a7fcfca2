import Foundation

/// One message of the Gameday websocket push: only says that the game changed.
package struct PushMessage: Codable, Sendable, Hashable {
    package var timeStamp: String
    /// A string in real messages.
    package var gamePk: String
    package var updateId: String?
    package var wait: Int?
    package var logicalEvents: [String]?
    package var gameEvents: [String]?
    package var isDelay: Bool?

    private enum CodingKeys: String, CodingKey {
        case timeStamp, gamePk, updateId, wait, logicalEvents, gameEvents, isDelay
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        timeStamp = try container.decode(String.self, forKey: .timeStamp)
        // A string in the messages seen; a number would do as well.
        if let number = try? container.decode(Int.self, forKey: .gamePk) {
            gamePk = String(number)
        } else {
            gamePk = try container.decode(String.self, forKey: .gamePk)
        }
        updateId = try container.decodeIfPresent(String.self, forKey: .updateId)
        wait = try container.decodeIfPresent(Int.self, forKey: .wait)
        logicalEvents = try container.decodeIfPresent([String].self, forKey: .logicalEvents)
        gameEvents = try container.decodeIfPresent([String].self, forKey: .gameEvents)
        isDelay = try container.decodeIfPresent(Bool.self, forKey: .isDelay)
    }
}
