import Foundation
import Synchronization

/// How the poller's requests to the Stats API are going: what `/readyz` and the metrics say of
/// the source. The poller records each request's outcome and, at the end of each round (the
/// requests made at one wake-up), when it plans to ask next.
package final class PollerHealth: Sendable {
    package struct Snapshot: Sendable {
        package var startedAt: Date
        package var lastSuccess: Date?
        package var lastFailure: Date?
        /// What the last failed request met.
        package var lastFailureReason: String?
        /// Rounds in a row whose requests all failed.
        package var failingRounds = 0
        /// Seconds from the last round to the next request the poller planned: how long the
        /// source may rightly stay quiet.
        package var plannedWait: TimeInterval = 0
        /// When the poller plans to ask next (the schedule or a game), as the last round left it.
        package var nextRound: Date?
        /// When silence stops being expected: the next planned request, its deadline and 5 s,
        /// from the last round that asked (a round that asked nothing only moves it later).
        package var answerDue: Date?
        package var lastRound: Date?
        /// Requests since start by outcome: ok, http (an answer other than 200), timeout,
        /// connection, unreadable (not the JSON expected).
        package var requests: [String: Int] = [:]
        /// Each request's deadline.
        package var timeout: TimeInterval
        /// The games followed, by `gamePk`: each one's requests (the schedule's are the source's
        /// only). A game is kept until an hour after its last request.
        package var games: [Int: Game] = [:]

        /// Ready when the last round had an answer and one came within the planned wait (and a
        /// request's deadline, and a little slack); otherwise why not.
        package func readiness(now: Date) -> (ready: Bool, reason: String?) {
            if failingRounds > 0 {
                return (
                    false,
                    "the Stats API did not answer the last \(failingRounds == 1 ? "round" : "\(failingRounds) rounds") "
                        + "of requests: \(lastFailureReason ?? "no answer")"
                )
            }
            guard let lastSuccess else {
                return (false, "no answer from the Stats API yet")
            }
            if let answerDue, now > answerDue, lastSuccess < answerDue {
                return (
                    false,
                    "no answer from the Stats API for \(Int(now.timeIntervalSince(lastSuccess))) s (one was due "
                        + "\(Int(now.timeIntervalSince(answerDue))) s ago)"
                )
            }
            return (true, nil)
        }
    }

    /// One game's feed requests.
    package struct Game: Sendable, Equatable {
        /// The game's id (Retrosheet's form), once a feed was read.
        package var gameID: String?
        package var lastRequest: Date
        package var lastSuccess: Date?
        package var answered = 0
        /// Requests that failed, or were answered with something that was not its feed.
        package var failed = 0
        /// The feed's own time of its latest change (`metaData.timeStamp`, UTC) as last read: how
        /// far the game had got at MLB when this server last heard of it.
        package var feedTime: Date?
        /// Seconds from the feed's time of its latest change to this server reading it: how late
        /// the server learns of a change (up to a poll's wait, when the game changed just after
        /// the previous poll). Nil until a change is read, and when the feed's clock is not this
        /// server's (more than an hour apart: a replayed day).
        package var feedLag: TimeInterval?
    }

    /// How long a game is kept after its last request.
    package static let keepGame: TimeInterval = 3600

    private struct Round {
        var answered = 0
        var failed = 0
    }

    private let state: Mutex<(snapshot: Snapshot, round: Round)>

    package init(now: Date, timeout: TimeInterval) {
        state = Mutex((Snapshot(startedAt: now, timeout: timeout), Round()))
    }

    package var snapshot: Snapshot { state.withLock { $0.snapshot } }

    /// A request answered with a 200.
    package func answered(at now: Date) {
        state.withLock {
            $0.snapshot.lastSuccess = now
            $0.snapshot.requests["ok", default: 0] += 1
            $0.round.answered += 1
        }
    }

    /// A request that failed, and how.
    package func failed(_ error: any Error, at now: Date) {
        let kind = Self.kind(of: error)
        state.withLock {
            $0.snapshot.lastFailure = now
            $0.snapshot.lastFailureReason = Self.reason(error)
            $0.snapshot.requests[kind, default: 0] += 1
            $0.round.failed += 1
        }
    }

    /// A game's feed request answered and read (`game` nil when the answer was not its feed).
    /// `feedTimeStamp` is the feed's `metaData.timeStamp`; the lag is taken only when it moved.
    package func answered(pk: Int, gameID: String?, feedTimeStamp: String?, readable: Bool, at now: Date) {
        state.withLock {
            var game = $0.snapshot.games[pk] ?? Game(lastRequest: now)
            game.lastRequest = now
            if readable {
                game.answered += 1
                game.lastSuccess = now
                if let gameID { game.gameID = gameID }
                if let stamp = feedTimeStamp.flatMap(GumboGame.date(timeStamp:)), stamp != game.feedTime {
                    game.feedTime = stamp
                    // Only where the feed keeps this server's time: a fake replaying an old day
                    // stamps its feeds with that day's.
                    let lag = now.timeIntervalSince(stamp)
                    game.feedLag = (-60...Self.keepGame).contains(lag) ? max(0, lag) : nil
                }
            } else {
                game.failed += 1
            }
            $0.snapshot.games[pk] = game
            $0.snapshot.games = $0.snapshot.games.filter { now.timeIntervalSince($0.value.lastRequest) < Self.keepGame }
        }
    }

    /// A game's feed request that failed.
    package func failed(pk: Int, at now: Date) {
        answered(pk: pk, gameID: nil, feedTimeStamp: nil, readable: false, at: now)
    }

    /// The round over: the next request is planned for `next`.
    package func roundEnded(at now: Date, next: Date) {
        state.withLock {
            if $0.round.answered > 0 {
                $0.snapshot.failingRounds = 0
            } else if $0.round.failed > 0 {
                $0.snapshot.failingRounds += 1
            }
            let due = next.addingTimeInterval($0.snapshot.timeout + 5)
            if $0.round.answered + $0.round.failed > 0 {
                $0.snapshot.lastRound = now
                $0.snapshot.answerDue = due
            } else {
                $0.snapshot.answerDue = max($0.snapshot.answerDue ?? due, due)
            }
            $0.snapshot.plannedWait = max(0, next.timeIntervalSince(now))
            $0.snapshot.nextRound = next
            $0.round = Round()
        }
    }

    /// An answer that came but could not be read.
    package struct Unreadable: Error {
        package init() {}
    }

    /// The outcome names of `requests`, each a metric label.
    package static let kinds = ["ok", "http", "timeout", "connection", "unreadable"]

    /// What `/readyz` says of a failure: the status and route of a refused request, the kind of
    /// any other (not the error's own text, which may name hosts and addresses).
    static func reason(_ error: any Error) -> String {
        guard let error = error as? TransportError else { return "an answer that was not the JSON expected" }
        let route = error.path.split(separator: "?").first.map(String.init) ?? error.path
        switch kind(of: error) {
        case "http": return "\(error.reason) on \(route)"
        case "timeout": return "no answer within the deadline on \(route)"
        default: return "no connection for \(route)"
        }
    }

    static func kind(of error: any Error) -> String {
        guard let error = error as? TransportError else { return "unreadable" }
        if error.reason.hasPrefix("HTTP ") { return "http" }
        let reason = error.reason.lowercased()
        return reason.contains("timeout") || reason.contains("deadline") ? "timeout" : "connection"
    }
}
