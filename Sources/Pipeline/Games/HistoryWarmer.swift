import Alerts
import Baseball
import ServiceLifecycle
import Synchronization

/// Looks up what a bid's no-hitter would mean once it is hitless through four innings, while the
/// game goes on, so the completed moment carries it without waiting (the lookup reads seasons back
/// to the club's previous no-hitter: decades of them for some clubs). A consumer of game changes
/// that asks, and a service that answers the questions one at a time into ``NoHitterMeanings``.
package struct HistoryWarmer: GameChangeConsumer, Service {
    /// A no-hitter to look up: the club as it was that day, the game and its date.
    package struct Question: Sendable, Hashable {
        package var gameID: String
        package var side: Side
        package var franchise: String
        package var nickname: String
        package var date: String
    }

    private final class State: Sendable {
        private struct Inner {
            var asked = Set<String>()
            var open = 0
            var idle: [Int: CheckedContinuation<Void, Never>] = [:]
            var nextWaiter = 0
        }

        private let inner = Mutex(Inner())

        /// True the first time `key` is asked.
        func ask(_ key: String) -> Bool {
            inner.withLock {
                guard $0.asked.insert(key).inserted else { return false }
                $0.open += 1
                return true
            }
        }

        func answered() {
            let waiters = inner.withLock { inner -> [CheckedContinuation<Void, Never>] in
                inner.open -= 1
                guard inner.open == 0 else { return [] }
                defer { inner.idle.removeAll() }
                return Array(inner.idle.values)
            }
            for waiter in waiters { waiter.resume() }
        }

        /// Returns when nothing asked is unanswered, or when the task is cancelled.
        func waitUntilIdle() async {
            let id = inner.withLock { inner -> Int in
                inner.nextWaiter += 1
                return inner.nextWaiter
            }
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let now = inner.withLock { inner -> Bool in
                        if inner.open == 0 || Task.isCancelled { return true }
                        inner.idle[id] = continuation
                        return false
                    }
                    if now { continuation.resume() }
                }
            } onCancel: {
                inner.withLock { $0.idle.removeValue(forKey: id) }?.resume()
            }
        }
    }

    package let meanings: NoHitterMeanings
    private let lookup: @Sendable (Question) async -> String?
    private let questions: AsyncStream<Question>
    private let asking: AsyncStream<Question>.Continuation
    private let state = State()

    /// `lookup` answers what a no-hitter would mean (nil: nothing to say).
    package init(meanings: NoHitterMeanings, lookup: @escaping @Sendable (Question) async -> String?) {
        self.meanings = meanings
        self.lookup = lookup
        (questions, asking) = AsyncStream.makeStream(of: Question.self)
    }

    package func consume(_ change: GameChange) async throws {
        for moment in change.moments
        where moment.kind == .hitlessInnings && moment.outs >= Moment.notableOuts && moment.reason == nil {
            let club = change.game.info.team(moment.pitchingSide).club
            let question = Question(
                gameID: moment.gameID, side: moment.pitchingSide, franchise: club.franchise, nickname: club.nickname,
                date: change.game.info.date)
            if state.ask("\(question.gameID)-\(question.side)") {
                meanings.asked(gameID: question.gameID)
                asking.yield(question)
            }
        }
    }

    /// Answers the questions as they come, until graceful shutdown.
    package func run() async throws {
        await cancelWhenGracefulShutdown {
            for await question in questions {
                let meaning = await lookup(question)
                meanings.set(meaning, gameID: question.gameID, side: question.side)
                state.answered()
            }
        }
        // Stopped: what was left unasked is nobody's wait.
        meanings.abandon()
    }

    /// Returns once every question asked so far is answered: a replay as fast as it can go waits
    /// for this after each play, as it waits for the alerts, so a completed no-hitter's meaning
    /// does not depend on the machine's speed.
    package func waitUntilIdle() async {
        await state.waitUntilIdle()
    }
}
