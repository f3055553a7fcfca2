import Foundation
import Logging
import ServiceLifecycle
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
}

/// The Gameday websocket push (`{base}v1/game/push/subscribe/gameday/{pk}`): one socket per game
/// followed, as a Service whose `run()` holds them in a task group. A message names the game and
/// the feed's new timecode; the text `Gameday5` is the heartbeat (every 10 s). A socket that
/// fails, closes or stays silent past `silence` is opened again after a backoff with full jitter
/// (1 s doubling to a minute): meanwhile the poller polls at the feed's wait, so a lost push costs
/// latency only.
package final class GamedayPushClient: GamedayPushing, Service {
    package let nudges = PushNudges()
    /// `wss://ws.statsapi.mlb.com/api/` (a fake's `ws://127.0.0.1:port/api/`).
    package let baseURL: String
    package let silence: Duration
    private let logger: Logger
    private let random: @Sendable () -> Double
    /// The games followed, each with what ends its socket's current wait when it is no longer
    /// followed; and the games to start listening to, handed to `run`.
    private let followed = Mutex<[Int: Ended]>([:])
    private let starts: AsyncStream<Int>
    private let starting: AsyncStream<Int>.Continuation

    package init(
        baseURL: String, logger: Logger, silence: Duration = .seconds(30),
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
    ) {
        self.baseURL = baseURL.hasSuffix("/") ? baseURL : baseURL + "/"
        self.logger = logger
        self.silence = silence
        self.random = random
        (starts, starting) = AsyncStream.makeStream(of: Int.self)
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
        let (started, ended) = followed.withLock { followed -> ([Int], [Ended]) in
            var ended: [Ended] = []
            for (pk, end) in followed where !pks.contains(pk) {
                ended.append(end)
                followed[pk] = nil
            }
            let started = pks.filter { followed[$0] == nil }
            for pk in started { followed[pk] = Ended() }
            return (Array(started), ended)
        }
        for end in ended { end.fire() }
        for pk in started { starting.yield(pk) }
    }

    /// Listens to each game as it is followed, until graceful shutdown (every socket is closed).
    package func run() async throws {
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                for await pk in self.starts {
                    group.addTask { await self.listen(pk) }
                }
            }
        }
    }

    /// What ends a game's current socket when the game is no longer followed; nil once it is not.
    private func ended(_ pk: Int) -> Ended? { followed.withLock { $0[pk] } }

    /// One game's socket, opened again until the game is no longer followed or the task is
    /// cancelled.
    private func listen(_ pk: Int) async {
        let url = baseURL + "v1/game/push/subscribe/gameday/\(pk)"
        var failures = 0
        while !Task.isCancelled, let unfollowed = ended(pk) {
            let heard = Heard()
            let opened = ContinuousClock.now
            // Whichever comes first: the socket's end, a silence, the game no longer followed.
            let reason = await withTaskGroup(of: String?.self) { group in
                group.addTask { [self] in
                    do {
                        try await GamedaySocket(url: url).run { text in
                            heard.heard()
                            if let text { self.received(text, pk: pk) }
                        }
                        return "closed"
                    } catch {
                        return "\(error)"
                    }
                }
                group.addTask { [silence] in
                    // A socket that says nothing, not even its heartbeat, is opened again.
                    while !Task.isCancelled {
                        try? await Task.sleep(for: .milliseconds(250))
                        if ContinuousClock.now - heard.last > silence { return "silent" }
                    }
                    return nil
                }
                group.addTask {
                    await unfollowed.wait()
                    return nil
                }
                let first = await group.next() ?? nil
                group.cancelAll()
                return first
            }
            guard let reason, !Task.isCancelled, ended(pk) === unfollowed else { return }
            logger.debug(
                "push channel ended; polling meanwhile", metadata: ["game.pk": "\(pk)", "reason": "\(reason)"])
            // The backoff starts again only after a socket that lived and spoke: one that speaks
            // once and drops is opened less and less often.
            let lived = ContinuousClock.now - opened > .seconds(60)
            failures = heard.any && lived ? 1 : failures + 1
            let ceiling = min(60, pow(2, Double(min(failures - 1, 6))))
            do {
                try await Task.sleep(for: .seconds(max(0.05, random() * ceiling)))
            } catch {
                return
            }
        }
    }

    /// Fired once (the game is no longer followed); waited for by the game's listener.
    final class Ended: Sendable {
        private let state = Mutex<(fired: Bool, waiters: [Int: CheckedContinuation<Void, Never>], next: Int)>(
            (false, [:], 0))

        func fire() {
            let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
                state.fired = true
                defer { state.waiters.removeAll() }
                return Array(state.waiters.values)
            }
            for waiter in waiters { waiter.resume() }
        }

        /// Returns once fired, or when the task is cancelled.
        func wait() async {
            let id = state.withLock { state -> Int in
                state.next += 1
                return state.next
            }
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let now = state.withLock { state -> Bool in
                        if state.fired || Task.isCancelled { return true }
                        state.waiters[id] = continuation
                        return false
                    }
                    if now { continuation.resume() }
                }
            } onCancel: {
                state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
            }
        }
    }

    /// A message on game `pk`'s socket: a nudge, when it is about that game and names a timecode.
    func received(_ text: String, pk: Int) {
        guard text.first == "{" else { return }
        let message: PushMessage
        do {
            message = try JSONDecoder().decode(PushMessage.self, from: Data(text.utf8))
        } catch {
            logger.debug("push message not read", metadata: ["game.pk": "\(pk)", "error": "\(error)"])
            return
        }
        guard Int(message.gamePk) == pk else { return }
        nudges.add(pk: pk, timeStamp: message.timeStamp, updateID: message.updateId)
    }

    /// When a socket last heard anything, and whether it heard anything at all.
    final class Heard: Sendable {
        private let state = Mutex<(last: ContinuousClock.Instant, any: Bool)>((.now, false))

        var last: ContinuousClock.Instant { state.withLock { $0.last } }
        var any: Bool { state.withLock { $0.any } }

        func heard() {
            state.withLock { $0 = (.now, true) }
        }
    }
}
