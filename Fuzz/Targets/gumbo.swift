import Alerts
import Foundation
import JSON
import StatsAPI

/// The Stats API's live feed as the poller reads it: JSON into a document, a JSON Patch applied to
/// it (the input's second half, when it splits on a NUL byte), the typed feed decoded from the
/// tree, translated from GUMBO, said once per change and followed by the engine.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let parts = bytes.split(separator: 0, maxSplits: 1, omittingEmptySubsequences: false)
    guard var document = try? JSONValue(parsing: Data(parts[0])) else { return 0 }
    var ledger = StatsAPIFeedLedger()
    var follower: GameFollower?
    func read(_ document: JSONValue) {
        guard let feed = try? document.decode(GameFeed.self), let game = try? GumboGame(feed) else { return }
        var following = follower ?? GameFollower(gameID: game.gameID)
        for item in ledger.items(for: game, now: Date(timeIntervalSince1970: 0)) { _ = following.follow(item) }
        follower = following
    }
    read(document)
    if parts.count > 1, let patch = try? JSONValue(parsing: Data(parts[1])) {
        switch try? DiffPatchResponse(patch) {
        case .feed(let whole)?: read(whole)
        case .patches(let patches)?:
            for patch in patches where (try? patch.apply(to: &document)) != nil {}
            read(document)
        case nil: break
        }
    }
    return 0
}
