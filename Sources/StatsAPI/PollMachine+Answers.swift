import Foundation
import JSON
import Logging

extension PollMachine {
    /// What came back for a game's request, parsed by the shell before the machine sees it.
    package enum Answer: Sendable {
        /// A 200 answer's body, as JSON.
        case document(JSONValue)
        /// A 200 answer whose body is not JSON.
        case unreadable(String)
        /// No 200 answer (a status, a timeout, a connection that failed).
        case failed(any Error)

        /// A response as the transport gave it, parsed.
        package init(_ response: Result<Data, any Error>) {
            switch response {
            case .failure(let error):
                self = .failed(error)
            case .success(let data):
                do {
                    self = .document(try JSONValue(parsing: data))
                } catch {
                    self = .unreadable("not JSON: \(error)")
                }
            }
        }
    }

    /// What an answer meant, for the shell to act on: hand a changed game on, record the request
    /// as answered, unreadable or failed, and log the notes.
    package struct Outcome: Sendable {
        package enum Kind: Sendable {
            /// The feed changed: the game as it stands now.
            case changed(GumboGame)
            /// Answered, with nothing new (the same feed, an older one, a patch that did not apply).
            case unchanged
            /// Answered, but not with a feed that could be read.
            case unreadable(String)
            /// The request failed.
            case failed(any Error)
        }

        package var kind: Kind
        package var notes: [Note]
        /// The game's id and the feed's timecode kept after the answer.
        package var gameID: String?
        package var timeStamp: String?

        /// The game, when its feed changed.
        package var game: GumboGame? {
            if case .changed(let game) = kind { return game }
            return nil
        }
    }

    /// The answer to a game's request (from ``request(_:)``, asked at `now`): what it meant. The
    /// next request waits from `now`: the feed's wait, or a backoff (`random` in 0..<1 for its
    /// jitter) after a failure. A game keeps its last good state through bad answers.
    package mutating func answered(_ pk: Int, _ answer: Answer, now: Date, random: Double) -> Outcome {
        let (kind, notes) = decide(pk, answer, now: now, random: random)
        return Outcome(kind: kind, notes: notes, gameID: tracks[pk]?.gameID, timeStamp: tracks[pk]?.timeStamp)
    }

    private mutating func decide(_ pk: Int, _ answer: Answer, now: Date, random: Double) -> (
        Outcome.Kind, [Note]
    ) {
        guard var track = tracks[pk] else { return (.unchanged, []) }
        track.lastRequest = now
        defer {
            // A push named a newer feed than this answer: asked again soon, a few times.
            if let pushed = track.pushed {
                if let kept = track.timeStamp, kept >= pushed {
                    track.pushed = nil
                } else if track.failures == 0, !track.done, track.pushRetries < settings.nudgeRetries {
                    track.pushRetries += 1
                    track.nextPoll = min(track.nextPoll, now.addingTimeInterval(settings.nudgeInterval))
                } else {
                    track.pushed = nil
                }
            }
            tracks[pk] = track
        }
        let context: Logger.Metadata = ["game.pk": "\(pk)", "timecode": "\(track.timeStamp ?? "none")"]
        var notes: [Note] = []
        do {
            let response: JSONValue
            switch answer {
            case .document(let value): response = value
            case .unreadable(let reason): throw Unreadable(reason: reason)
            case .failed(let error): throw error
            }
            var document: JSONValue
            if let cached = track.document, track.timeStamp != nil {
                switch try DiffPatchResponse(response) {
                case .feed(let whole):
                    document = whole
                case .patches(let patches):
                    document = cached
                    do {
                        for patch in patches { try patch.apply(to: &document) }
                    } catch {
                        // The whole feed comes with the next poll: not sooner than the wait asked for.
                        track.document = nil
                        track.nextPoll = now.addingTimeInterval(TimeInterval(settings.defaultWait))
                        notes.append(
                            Note(
                                level: .warning, message: "patch did not apply; the whole feed comes next time",
                                metadata: context.merging(["error": "\(error)"]) { $1 }))
                        return (.unchanged, notes)
                    }
                }
            } else {
                document = response
            }
            let feed: GameFeed
            do {
                feed = try document.decode(GameFeed.self)
            } catch {
                throw Unreadable(reason: "not a live feed: \(Lenient<GameFeed>.describe(error))")
            }
            let wait = TimeInterval(max(1, feed.metaData.wait ?? settings.defaultWait))
            if let kept = track.timeStamp, feed.metaData.timeStamp < kept {
                track.nextPoll = now.addingTimeInterval(wait)
                notes.append(
                    Note(
                        level: .warning, message: "feed older than the one kept; ignored",
                        metadata: context.merging(["received": "\(feed.metaData.timeStamp)"]) { $1 }))
                return (.unchanged, notes)
            }
            var game: GumboGame
            do {
                game = try GumboGame(feed)
            } catch {
                throw Unreadable(reason: "\(error)")
            }
            game.info.broadcasts = track.broadcasts
            for problem in game.problems where !track.problems.contains(problem) {
                track.problems.insert(problem)
                notes.append(
                    Note(
                        level: .warning, message: "feed problem; the game keeps its last good play",
                        metadata: context.merging(["problem": "\(problem)", "timecode": "\(feed.metaData.timeStamp)"]) {
                            $1
                        }))
            }
            for notice in game.notices where !track.problems.contains(notice) {
                track.problems.insert(notice)
                notes.append(
                    Note(
                        level: .warning, message: "feed disagrees with itself; its own counters are shown",
                        metadata: context.merging(["notice": "\(notice)", "timecode": "\(feed.metaData.timeStamp)"]) {
                            $1
                        }))
            }
            track.document = document
            track.timeStamp = feed.metaData.timeStamp
            track.failures = 0
            track.nextPoll = now.addingTimeInterval(wait)
            let summary = (feed.metaData.timeStamp, feed.gameData.status.codedGameState, game.updates.count)
            let changed = track.reported.map { $0 != summary } ?? true
            if changed {
                track.reported = summary
                track.lastChange = now
            } else if game.status.phase == .live && now.timeIntervalSince(track.lastChange) > settings.staleAfter {
                track.document = nil
                track.lastChange = now
                notes.append(
                    Note(level: .warning, message: "feed has not moved; fetching it whole next time", metadata: context)
                )
            }
            if game.isFinal { track.done = true }
            return (changed ? .changed(game) : .unchanged, notes)
        } catch {
            track.failures += 1
            let delay = backoff(failures: track.failures, floor: TimeInterval(settings.defaultWait), random: random)
            track.nextPoll = now.addingTimeInterval(delay)
            notes.append(
                Note(
                    level: .warning, message: "feed request failed; the game keeps its last good state",
                    metadata: context.merging(["error": "\(error)", "retry.seconds": "\(Int(delay))"]) { $1 }))
            if case .failed(let failure) = answer { return (.failed(failure), notes) }
            return (.unreadable("\(error)"), notes)
        }
    }

    /// An answer that came but could not be read as a live feed.
    struct Unreadable: Error, CustomStringConvertible {
        var reason: String
        var description: String { reason }
    }
}
