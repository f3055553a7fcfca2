import Clocks
import Foundation
import HummingbirdWSClient
import Logging
import NIOCore
import NIOSSL
import Synchronization

/// What the Gameday push said and the poller has not acted on yet: for each game, the newest
/// timecode a message named. A message only says *that* the game changed; the poller fetches
/// the patch (`PollMachine.nudged`).
package final class PushNudges: Sendable {
    private struct State {
        var pending: [Int: String] = [:]
        var waiter: CheckedContinuation<Void, Never>?
        var received = 0
        /// Each game's latest messages' ids: a message sent twice is taken once.
        var seen: [Int: [String]] = [:]
    }

    private let state = Mutex(State())

    package init() {}

    /// A message for game `pk` naming `timeStamp` (`yyyyMMdd_HHmmss`): kept unless it was taken
    /// before (its `updateId` seen) or a newer one for the game waits already; wakes the poller.
    package func add(pk: Int, timeStamp: String, updateID: String? = nil) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.received += 1
            if let updateID {
                if state.seen[pk]?.contains(updateID) == true { return nil }
                state.seen[pk, default: []].append(updateID)
                if state.seen[pk]!.count > 32 { state.seen[pk]!.removeFirst() }
            }
            if let kept = state.pending[pk], kept >= timeStamp { return nil }
            state.pending[pk] = timeStamp
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    /// Messages received so far (the duplicates and the stale ones included).
    package var received: Int { state.withLock { $0.received } }

    /// What waits, taken.
    package func take() -> [Int: String] {
        state.withLock { state in
            defer { state.pending.removeAll() }
            return state.pending
        }
    }

    /// Returns when a nudge waits, or when the task is cancelled.
    package func wait() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { state -> CheckedContinuation<Void, Never>? in
                    if !state.pending.isEmpty || Task.isCancelled { return continuation }
                    // One poller waits at a time; a waiter left behind is let go.
                    let previous = state.waiter
                    state.waiter = continuation
                    previous?.resume()
                    return nil
                }
                ready?.resume()
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume()
        }
    }
}

/// Listens to the games' Gameday push channels. The poller says which games it follows
/// (`follow`); messages become nudges.
package protocol GamedayPushing: Sendable {
    var nudges: PushNudges { get }
    /// The games to listen to now: a channel is opened for each new one, and closed for a game no
    /// longer named.
    func follow(_ pks: Set<Int>)
    /// Closes every channel.
    func stop()
}

/// The Gameday websocket push (`{base}v1/game/push/subscribe/gameday/{pk}`): one socket per game
/// followed. A message names the game and the feed's new timecode; the text `Gameday5` is the
/// heartbeat (every 10 s). A socket that fails, closes or stays silent past `silence` is opened
/// again after a backoff with full jitter (1 s doubling to a minute): meanwhile the poller polls
/// at the feed's wait, so a lost push costs latency only.
package final class GamedayPushClient: GamedayPushing {
    package let nudges = PushNudges()
    /// `wss://ws.statsapi.mlb.com/api/` (a fake's `ws://127.0.0.1:port/api/`).
    package let baseURL: String
    package let silence: Duration
    private let logger: Logger
    private let random: @Sendable () -> Double
    private let listeners = Mutex<[Int: Task<Void, Never>]>([:])
    private let stopped = Mutex(false)

    package init(
        baseURL: String, logger: Logger, silence: Duration = .seconds(30),
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
    ) {
        self.baseURL = baseURL.hasSuffix("/") ? baseURL : baseURL + "/"
        self.logger = logger
        self.silence = silence
        self.random = random
    }

    /// The push's base for a Stats API base: MLB's own, or the same host's `ws(s)` for another
    /// (a fake serves both on one port).
    package static func baseURL(forStatsAPI url: String) -> String? {
        guard var components = URLComponents(string: url), let scheme = components.scheme?.lowercased() else {
            return nil
        }
        if components.host == "statsapi.mlb.com" { return "wss://ws.statsapi.mlb.com/api/" }
        switch scheme {
        case "https": components.scheme = "wss"
        case "http": components.scheme = "ws"
        default: return nil
        }
        guard let text = components.string else { return nil }
        return text.hasSuffix("/") ? text : text + "/"
    }

    package func follow(_ pks: Set<Int>) {
        guard !stopped.withLock({ $0 }) else { return }
        let ended = listeners.withLock { listeners -> [Task<Void, Never>] in
            var ended: [Task<Void, Never>] = []
            for (pk, task) in listeners where !pks.contains(pk) {
                ended.append(task)
                listeners[pk] = nil
            }
            for pk in pks where listeners[pk] == nil {
                listeners[pk] = Task { [self] in await listen(pk) }
            }
            return ended
        }
        for task in ended { task.cancel() }
    }

    package func stop() {
        stopped.withLock { $0 = true }
        let all = listeners.withLock { listeners in
            defer { listeners.removeAll() }
            return Array(listeners.values)
        }
        for task in all { task.cancel() }
    }

    /// One game's socket, opened again until cancelled.
    private func listen(_ pk: Int) async {
        let url = baseURL + "v1/game/push/subscribe/gameday/\(pk)"
        var failures = 0
        while !Task.isCancelled {
            let heard = Heard()
            let opened = DispatchTime.now().uptimeNanoseconds
            // The socket runs in a task of its own, and the listener waits for whichever comes
            // first: its end, a silence, or the listener's cancellation. A connection stuck in
            // its handshake does not heed cancellation: it is let go, not waited for.
            let connection = Task { [self, logger] in
                try await WebSocketClient.connect(
                    url: url, configuration: .init(maxFrameSize: 1 << 16),
                    tlsConfiguration: url.hasPrefix("wss:") ? .makeClientConfiguration() : nil,
                    logger: logger
                ) { inbound, _, _ in
                    for try await message in inbound.messages(maxSize: 1 << 16) {
                        heard.heard()
                        guard case .text(let text) = message else { continue }
                        self.received(text, pk: pk)
                    }
                }
            }
            let ended = Ended()
            let watch = Task {
                if case .failure(let error) = await connection.result { ended.fire(failure: "\(error)") }
                ended.fire()
            }
            // A socket that says nothing, not even its heartbeat, is opened again.
            let watchdog = Task { [silence] in
                let limit =
                    UInt64(silence.components.seconds) * 1_000_000_000
                    + UInt64(silence.components.attoseconds / 1_000_000_000)
                while !Task.isCancelled {
                    try? await Task.sleep(for: .milliseconds(250))
                    let last = heard.last.load(ordering: .relaxed)
                    let now = DispatchTime.now().uptimeNanoseconds
                    if now > last, now - last > limit {
                        ended.fire()
                        return
                    }
                }
            }
            await withTaskCancellationHandler {
                await ended.wait()
            } onCancel: {
                ended.fire()
            }
            connection.cancel()
            watchdog.cancel()
            watch.cancel()
            if Task.isCancelled { return }
            logger.debug(
                "push channel ended; polling meanwhile",
                metadata: ["game.pk": "\(pk)", "reason": "\(ended.failure ?? "closed, or silent")"])
            // The backoff starts again only after a socket that lived and spoke: one that speaks
            // once and drops is opened less and less often.
            let lived = DispatchTime.now().uptimeNanoseconds - opened > 60 * 1_000_000_000
            failures = heard.any.load(ordering: .relaxed) && lived ? 1 : failures + 1
            let ceiling = min(60, pow(2, Double(min(failures - 1, 6))))
            do {
                try await Task.sleep(for: .seconds(max(0.05, random() * ceiling)))
            } catch {
                return
            }
        }
    }

    /// Fired once, by whichever comes first (the socket's end, with its failure; a silence; the
    /// listener's cancellation); waited for once.
    final class Ended: Sendable {
        private let state = Mutex<(fired: Bool, waiter: CheckedContinuation<Void, Never>?, failure: String?)>(
            (false, nil, nil))

        /// Why the socket failed, when it did and that ended it.
        var failure: String? { state.withLock { $0.failure } }

        func fire(failure: String? = nil) {
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                guard !state.fired else { return nil }
                state.fired = true
                state.failure = failure
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume()
        }

        func wait() async {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let fired = state.withLock { state -> Bool in
                    if state.fired { return true }
                    state.waiter = continuation
                    return false
                }
                if fired { continuation.resume() }
            }
        }
    }

    /// A message on game `pk`'s socket: a nudge, when it is about that game and names a timecode.
    func received(_ text: String, pk: Int) {
        guard text.first == "{", let message = try? JSONDecoder().decode(PushMessage.self, from: Data(text.utf8)),
            Int(message.gamePk) == pk
        else { return }
        nudges.add(pk: pk, timeStamp: message.timeStamp, updateID: message.updateId)
    }

    /// When a socket last heard anything, and whether it heard anything at all.
    final class Heard: Sendable {
        let last = Atomic<UInt64>(DispatchTime.now().uptimeNanoseconds)
        let any = Atomic<Bool>(false)

        func heard() {
            last.store(DispatchTime.now().uptimeNanoseconds, ordering: .relaxed)
            any.store(true, ordering: .relaxed)
        }
    }

    struct PushSilence: Error, CustomStringConvertible {
        var description: String { "no message, not even a heartbeat, within the silence limit" }
    }
}
