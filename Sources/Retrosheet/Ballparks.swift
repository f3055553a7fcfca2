import Foundation

/// A park of Retrosheet's park file (`ballparks.csv`: PARKID, NAME, AKA, CITY, STATE, START,
/// END, LEAGUE, NOTES), what names the park of a replayed game from its `info,site` record.
package struct Ballpark: Sendable, Hashable {
    /// Retrosheet's id, as `info,site` gives it: `CHI12`.
    package var id: String
    /// The park's name as the file gives it (today's, or its last): `Guaranteed Rate Field`.
    package var name: String
    package var city: String
    /// The state or province, empty where the file has none.
    package var state: String

    /// `Guaranteed Rate Field, Chicago, IL`.
    package var place: String {
        ([name, city] + (state.isEmpty ? [] : [state])).joined(separator: ", ")
    }
}

/// Retrosheet's park file, read.
package enum Ballparks {
    /// The parks of the file at `path` by id, with the lines that could not be read (the header,
    /// `PARKID,…`, is not a park).
    package static func read(file: String, bytes: [UInt8]) -> (parks: [String: Ballpark], problems: [RetrosheetError]) {
        var parks: [String: Ballpark] = [:]
        var problems: [RetrosheetError] = []
        TeamFile.forEachLine(file: file, bytes: bytes) { fields, number, text in
            guard fields.first != "PARKID" else { return }
            guard fields.count >= 5, !fields[0].isEmpty, !fields[1].isEmpty else {
                problems.append(
                    RetrosheetError(
                        file: file, line: number, text: text,
                        reason:
                            "a park line needs an id, a name, other names, a city and a state, found \(fields.count) fields"
                    ))
                return
            }
            // `Guaranteed Rate Field;U.S. Cellular Field`: the name of today, then earlier ones.
            let name = fields[1].split(separator: ";").first.map(String.init) ?? fields[1]
            parks[fields[0]] = Ballpark(id: fields[0], name: name, city: fields[3], state: fields[4])
        }
        return (parks, problems)
    }

    /// The parks for the event files `files`: the `ballparks.csv` in their folder or the folder
    /// above it (as `../shared/data/retrosheet` lays the seasons out), else the one nohit ships
    /// (`Data/retrosheet/ballparks.csv`); none when there is neither.
    package static func near(_ files: [String]) -> [String: Ballpark] {
        let folders = Set(files.map { ($0 as NSString).deletingLastPathComponent })
        let candidates = folders.sorted().flatMap { folder in
            [folder, (folder as NSString).deletingLastPathComponent].map {
                ($0 as NSString).appendingPathComponent("ballparks.csv")
            }
        }
        for path in candidates {
            if let bytes = try? FileBytes.read(path) { return read(file: path, bytes: bytes).parks }
        }
        return shipped
    }

    /// The park file nohit ships.
    package static let shipped: [String: Ballpark] = {
        let path = ShippedData.path("Data/retrosheet/ballparks.csv")
        guard let bytes = try? FileBytes.read(path) else { return [:] }
        return read(file: path, bytes: bytes).parks
    }()
}
