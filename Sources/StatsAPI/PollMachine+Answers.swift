import Baseball
import Foundation
import Logging

extension PollMachine {
    /// The answer to a game's request (from ``request(_:)``, asked at `now`): the game when its
    /// feed changed, and what to log. The next request waits from `now`: the feed's wait, or a
    /// backoff (`random` in 0..<1 for its jitter) after a failure. A game keeps its last good
    /// state through bad answers.
    package mutating func answered(
        _ pk: Int, _ answer: Result<Data, any Error>, now: Date, random: Double
    ) -> (game: GumboGame?, notes: [Note]) {
        guard var track = tracks[pk] else { return (nil, []) }
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
            let response = try JSONValue(parsing: try answer.get())
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
                        return (nil, notes)
                    }
                }
            } else {
                document = response
            }
            let feed: GameFeed
            do {
                feed = try document.decode(GameFeed.self)
            } catch {
                throw TransportError(
                    path: "game \(pk)", reason: "not a live feed: \(Lenient<GameFeed>.describe(error))")
            }
            let wait = TimeInterval(max(1, feed.metaData.wait ?? settings.defaultWait))
            if let kept = track.timeStamp, feed.metaData.timeStamp < kept {
                track.nextPoll = now.addingTimeInterval(wait)
                notes.append(
                    Note(
                        level: .warning, message: "feed older than the one kept; ignored",
                        metadata: context.merging(["received": "\(feed.metaData.timeStamp)"]) { $1 }))
                return (nil, notes)
            }
            var game = try GumboGame(feed)
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
            return (changed ? game : nil, notes)
        } catch {
            track.failures += 1
            let delay = backoff(failures: track.failures, floor: TimeInterval(settings.defaultWait), random: random)
            track.nextPoll = now.addingTimeInterval(delay)
            notes.append(
                Note(
                    level: .warning, message: "feed request failed; the game keeps its last good state",
                    metadata: context.merging(["error": "\(error)", "retry.seconds": "\(Int(delay))"]) { $1 }))
            return (nil, notes)
        }
    }
}
