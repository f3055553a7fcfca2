import Foundation

/// `v1/game/{pk}/playByPlay`.
package struct PlayByPlay: Codable, Sendable, Hashable {
    package var allPlays: [PlayRecord]
    package var currentPlay: PlayRecord?

    package init(allPlays: [PlayRecord], currentPlay: PlayRecord? = nil) {
        self.allPlays = allPlays
        self.currentPlay = currentPlay
    }
}
