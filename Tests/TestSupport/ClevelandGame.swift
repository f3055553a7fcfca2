import Foundation

/// Kansas City at Cleveland, Sep 10 2020 (Brady Singer's near no-hitter), from the shipped 2020
/// file, and the same game dated two years later: one club, the Indians in 2020 and the Guardians
/// from 2022, for the tests that check every surface names it as that season did.
package struct ClevelandGame {
    /// A folder of its own holding `2020CLE.EVA` and `2022CLE.EVA`, one game each.
    package let folder: URL

    package init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("nohit-cle-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let text = String(decoding: try TestData.bytes("retrosheet/2020/2020CLE.EVA"), as: UTF8.self)
        guard let start = text.range(of: "id,CLE202009100\n") else {
            throw CocoaError(.fileReadCorruptFile, userInfo: [NSFilePathErrorKey: "retrosheet/2020/2020CLE.EVA"])
        }
        let end = text[start.upperBound...].range(of: "\nid,")?.lowerBound ?? text.endIndex
        let game2020 = String(text[start.lowerBound..<end]) + "\n"
        let game2022 = game2020.replacingOccurrences(of: "id,CLE202009100", with: "id,CLE202209100")
            .replacingOccurrences(of: "info,date,2020/09/10", with: "info,date,2022/09/10")
        try Data(game2020.utf8).write(to: folder.appendingPathComponent("2020CLE.EVA"))
        try Data(game2022.utf8).write(to: folder.appendingPathComponent("2022CLE.EVA"))
    }

    /// The event file of `year` ("2020" or "2022").
    package func path(_ year: String) -> String { folder.appendingPathComponent("\(year)CLE.EVA").path }

    package func remove() { try? FileManager.default.removeItem(at: folder) }
}
