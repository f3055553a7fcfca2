import Foundation
import Retrosheet
import TestSupport
import Testing

/// Retrosheet's park file names the park of every replayed game, from its `info,site` record.
@Suite struct BallparkTests {
    static func shippedFile() throws -> (parks: [String: Ballpark], problems: [RetrosheetError]) {
        let path = ShippedData.path("Data/retrosheet/ballparks.csv")
        return Ballparks.read(file: path, bytes: Array(try Data(contentsOf: URL(fileURLWithPath: path))))
    }

    @Test func theShippedFileIsReadWhole() throws {
        let (parks, problems) = try Self.shippedFile()
        #expect(problems.isEmpty, "\(problems.prefix(3))")
        #expect(parks.count == 260)
        // A name with earlier names after it: today's.
        #expect(parks["CHI12"]?.name == "Guaranteed Rate Field")
        #expect(parks["CHI12"]?.place == "Guaranteed Rate Field, Chicago, IL")
        // Quoted notes with commas in them do not shift the fields.
        #expect(parks["CAN01"]?.name == "Mahaffey Park" && parks["CAN01"]?.city == "Canton")
        #expect(Ballparks.shipped == parks)
    }

    @Test func everyGameOfTheDayIsNamedItsPark() throws {
        let games = try ReplaySchedule.games(on: "2020-08-25", data: [TestData.path("retrosheet")])
        #expect(games.count > 10)
        for game in games {
            let site = try #require(game.record.info("site"), "\(game.record.id)")
            #expect(game.info.venue == Ballparks.shipped[site]?.name, "\(game.record.id) at \(site)")
            #expect(game.info.venue?.isEmpty == false, "\(game.record.id) at \(site)")
        }
        // Giolito's no-hitter, and the Blue Jays at home in Buffalo in 2020.
        #expect(games.first { $0.record.id == "CHA202008250" }?.info.venue == "Guaranteed Rate Field")
        let season = try EventFiles.expand([TestData.path("retrosheet/2020")])
        let sites = season.flatMap { file in
            (try? EventFileReader(path: file).games().compactMap { try? $0.get().info("site") }) ?? []
        }
        #expect(sites.count > 800)
        #expect(
            sites.allSatisfy { Ballparks.shipped[$0] != nil }, "\(Set(sites.filter { Ballparks.shipped[$0] == nil }))")
        #expect(Ballparks.shipped["BUF05"]?.name == "Sahlen Field")
    }

    /// A line that cannot be read is said with its file and line; the others are read.
    @Test func aDamagedLineIsSaid() {
        let text =
            "PARKID,NAME,AKA,CITY,STATE,START,END,LEAGUE,NOTES\nXXX01,Nowhere\nCHI12,Guaranteed Rate Field,,Chicago,IL,1991-04-18,,AL,\n"
        let (parks, problems) = Ballparks.read(file: "ballparks.csv", bytes: Array(text.utf8))
        #expect(parks.keys.sorted() == ["CHI12"])
        #expect(problems.count == 1)
        #expect(problems.first?.line == 2)
        #expect(problems.first?.description.hasPrefix("ballparks.csv:2: a park line needs") == true)
    }

    /// Seasons laid out as Retrosheet's are (`retrosheet/2012/…` beside `retrosheet/ballparks.csv`)
    /// use the file beside them; anywhere else, the one nohit ships.
    @Test func theFileBesideTheSeasonElseTheShippedOne() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("parks-\(UUID().uuidString)")
        let season = folder.appendingPathComponent("2020")
        try FileManager.default.createDirectory(at: season, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try "CHI12,Comiskey Park II,,Chicago,IL,1991-04-18,,AL,\n".write(
            to: folder.appendingPathComponent("ballparks.csv"), atomically: true, encoding: .utf8)
        #expect(
            Ballparks.near([season.appendingPathComponent("2020CHA.EVA").path])["CHI12"]?.name == "Comiskey Park II")
        #expect(Ballparks.near(["/nonexistent/2020/2020CHA.EVA"]) == Ballparks.shipped)
    }
}
