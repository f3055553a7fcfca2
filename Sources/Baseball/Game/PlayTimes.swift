import Foundation
import Synchronization

/// The source's own time of each game's latest play, and of the moments published from it: where
/// the play-to-send latency (`nohit_play_to_send_seconds`) starts. The source notes a game's play
/// time before it says what the play brings; the publisher notes, for the rows of a moment it
/// writes, the play time of the moment's game; a dispatcher reads it back by the row's bid and
/// time when the provider accepts. In memory, for one instance that both reads the games and
/// publishes their moments (not wired when several instances share the games); rows published
/// before a restart are not measured. A read that brings several plays at once measures their
/// moments from the latest.
package final class PlayTimes: Sendable {
    private struct Published: Hashable {
        var bidKey: String
        /// The rows' time, in milliseconds (a stored time read back may differ in its last bits).
        var milliseconds: Int64
    }

    private struct State {
        var games: [String: Date] = [:]
        var published: [Published: Date] = [:]
        /// In order of publication, to forget the oldest.
        var order: [Published] = []
    }

    /// How many moments' play times are kept (the oldest are forgotten: their alerts are long sent).
    package static let capacity = 4096

    private let state = Mutex(State())

    package init() {}

    /// The source's time of `gameID`'s latest play, as it is about to say what the play brings;
    /// nil when what it says is not a play of its time (a re-scoring): its moments are not measured.
    package func played(gameID: String, at time: Date?) {
        state.withLock { $0.games[gameID] = time }
    }

    /// The rows of a moment of `gameID` (bid `bidKey`) written at `time`: they carry the game's
    /// latest play time, if the source gave one.
    package func published(gameID: String, bidKey: String, at time: Date) {
        state.withLock { state in
            guard let played = state.games[gameID] else { return }
            let key = Published(bidKey: bidKey, milliseconds: Self.milliseconds(time))
            if state.published.updateValue(played, forKey: key) == nil { state.order.append(key) }
            if state.order.count > Self.capacity {
                let forgotten = state.order.count - Self.capacity
                for old in state.order.prefix(forgotten) { state.published[old] = nil }
                state.order.removeFirst(forgotten)
            }
        }
    }

    /// The play time of the rows of bid `bidKey` written at `time`, if this instance noted it.
    package func playTime(bidKey: String, at time: Date) -> Date? {
        state.withLock { $0.published[Published(bidKey: bidKey, milliseconds: Self.milliseconds(time))] }
    }

    private static func milliseconds(_ time: Date) -> Int64 {
        Int64((time.timeIntervalSince1970 * 1000).rounded())
    }
}
