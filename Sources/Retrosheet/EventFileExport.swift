/// The `cwevent`-style rows of one file, and the games that could not be read.
package struct EventFileExport: Sendable {
    package var file: String
    package var rows: [UInt8] = []
    package var plays = 0
    package var games = 0
    package var problems: [RetrosheetError] = []
    /// Damaged records the games were read without.
    package var warnings: [RetrosheetError] = []

    /// Reads and replays every game of `file`. A game that fails contributes no rows and one
    /// problem; the others are unaffected.
    package static func export(_ file: String) -> EventFileExport {
        var export = EventFileExport(file: file)
        let reader: EventFileReader
        do {
            reader = try EventFileReader(path: file)
        } catch {
            export.problems.append(error)
            return export
        }
        // Rows run about 2.3 times the size of the event file; sized so the buffer never grows.
        var writer = ByteWriter(capacity: reader.bytes.count * 5 / 2 + (64 << 10))
        reader.forEachGame { result in
            switch result {
            case .success(let game):
                export.warnings += game.warnings
                do throws(RetrosheetError) {
                    export.plays += try CWEventCSV.appendRows(of: game, to: &writer)
                    export.games += 1
                } catch {
                    export.problems.append(error)
                }
            case .failure(let error):
                export.problems.append(error)
            }
        }
        export.rows = writer.takeBytes()
        return export
    }
}
