import Retrosheet

/// Retrosheet event files: the reader, the event grammar, and every game it reads replayed
/// through the engine with both bids followed and its cwevent rows written.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    for result in EventFileReader(file: "fuzz.EVN", bytes: bytes).games() {
        guard case .success(let game) = result else { continue }
        if var engine = try? GameReplay.run(game, followsBids: true) {
            engine.finish(scheduledInnings: game.scheduledInnings)
        }
        _ = try? CWEventCSV.rows(of: game)
        _ = try? game.updates()
    }
    return 0
}
