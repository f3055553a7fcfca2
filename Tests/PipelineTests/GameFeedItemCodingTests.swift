import Alerts
import Baseball
import Foundation
import Pipeline
import Retrosheet
import TestSupport
import Testing

/// The wire form of what a source says (the shared game log of several instances keeps items as
/// JSON): every item of the 2020 season comes back equal after a round trip, and a follower fed
/// the decoded items ends where one fed the originals does.
@Suite(.heavy) struct GameFeedItemCodingTests {
    static func roundTrip(_ item: GameFeedItem) throws -> GameFeedItem {
        try JSONDecoder().decode(GameFeedItem.self, from: try JSONEncoder().encode(item))
    }

    /// Every game of 2020: its lineups, every update one by one and all at once (`revised`), and
    /// its end with the result.
    @Test func everyItemOfTheSeasonRoundTrips() async throws {
        let files = try EventFiles.expand([TestData.path("retrosheet/2020")])
        let counts = await EventFiles.map(files) { file -> (games: Int, updates: Int, mismatches: [String]) in
            guard let reader = try? EventFileReader(path: file) else { return (0, 0, ["\(file): unreadable"]) }
            var games = 0
            var updates = 0
            var mismatches: [String] = []
            for case .success(let record) in reader.games() {
                guard let list = try? record.updates() else { continue }
                games += 1
                updates += list.count
                var items: [GameFeedItem] = [
                    .lineups(record.startingAppearances, homeBatsFirst: record.homeBatsFirst), .revised(list),
                    .status(GameStatus(.final), result: record.result),
                ]
                items += list.map { .updates([$0]) }
                for (index, item) in items.enumerated() {
                    do {
                        guard try Self.roundTrip(item) == item else {
                            mismatches.append("\(record.id) item \(index): not equal after a round trip")
                            break
                        }
                    } catch {
                        mismatches.append("\(record.id) item \(index): \(error)")
                        break
                    }
                }
            }
            return (games, updates, mismatches)
        }
        let games = counts.reduce(0) { $0 + $1.games }
        let updates = counts.reduce(0) { $0 + $1.updates }
        let mismatches = counts.flatMap(\.mismatches)
        #expect(games == 898)
        #expect(updates == 90_353)  // plays, placeholders and substitutions
        #expect(mismatches.isEmpty, "\(mismatches.prefix(3))")
    }

    /// A day as the replay says it (schedules with names and broadcasts, lineups, statuses, plays),
    /// followed from decoded items: the same moments, final lines and bids as from the originals.
    @Test func aDayFollowedFromDecodedItemsEndsTheSame() throws {
        let games = try ReplaySchedule.games(on: "2020-08-25", data: [TestData.path("retrosheet")])
        let timeline = ReplayTimeline(games: games)
        var original: [String: GameFollower] = [:]
        var decoded: [String: GameFollower] = [:]
        var events = (original: [String](), decoded: [String]())
        for entry in timeline.entries {
            let back = try Self.roundTrip(entry.item)
            #expect(back == entry.item)
            var a = original[entry.gameID] ?? GameFollower(gameID: entry.gameID)
            var b = decoded[entry.gameID] ?? GameFollower(gameID: entry.gameID)
            events.original += a.follow(entry.item).map { "\($0)" }
            events.decoded += b.follow(back).map { "\($0)" }
            original[entry.gameID] = a
            decoded[entry.gameID] = b
        }
        #expect(events.original.count > 1000)
        #expect(events.original == events.decoded)
        for (id, follower) in original {
            #expect(decoded[id]?.bids == follower.bids, "\(id)")
            #expect(decoded[id]?.info == follower.info, "\(id)")
        }
    }
}
