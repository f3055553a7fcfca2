import Baseball

/// A team of a season's `TEAMyyyy` file.
package struct TeamRecord: Sendable, Hashable, Codable {
    /// Retrosheet's three-letter code, e.g. `CHA`.
    package var id: String
    /// `A` (American League) or `N` (National League).
    package var league: String
    package var city: String
    package var nickname: String

    /// "Chicago White Sox".
    package var name: String { "\(city) \(nickname)" }
}

/// A player of a team's roster file (`CHA2020.ROS`).
package struct RosterRecord: Sendable, Hashable {
    package var player: PlayerID
    package var lastName: String
    package var firstName: String
    /// `L`, `R`, `B` (both) or `?`.
    package var battingHand: String
    /// `L`, `R` or `?`.
    package var throwingHand: String
    package var team: String
    package var position: String

    package var name: String { "\(firstName) \(lastName)" }
}

/// Reads Retrosheet's team and roster files. Every line must have the expected fields; a bad
/// line is an error naming the file, line and text, and the rest of the file is still read.
package enum TeamFile {
    /// Parses a `TEAMyyyy` file.
    package static func teams(file: String, bytes: [UInt8]) -> (teams: [TeamRecord], problems: [RetrosheetError]) {
        var teams: [TeamRecord] = []
        var problems: [RetrosheetError] = []
        forEachLine(file: file, bytes: bytes) { fields, number, text in
            guard fields.count == 4 else {
                problems.append(
                    RetrosheetError(
                        file: file, line: number, text: text,
                        reason: "a team line needs 4 fields (code, league, city, nickname), found \(fields.count)"))
                return
            }
            guard fields[0].count == 3, fields[0].allSatisfy({ $0.isLetter || $0.isNumber }) else {
                problems.append(
                    RetrosheetError(
                        file: file, line: number, text: text,
                        reason: "'\(fields[0])' is not a three-character team code"))
                return
            }
            teams.append(TeamRecord(id: fields[0], league: fields[1], city: fields[2], nickname: fields[3]))
        }
        return (teams, problems)
    }

    /// Parses a roster file (`.ROS`).
    package static func roster(file: String, bytes: [UInt8]) -> (players: [RosterRecord], problems: [RetrosheetError]) {
        var players: [RosterRecord] = []
        var problems: [RetrosheetError] = []
        forEachLine(file: file, bytes: bytes) { fields, number, text in
            guard fields.count == 7 else {
                problems.append(
                    RetrosheetError(
                        file: file, line: number, text: text,
                        reason:
                            "a roster line needs 7 fields (id, last name, first name, bats, throws, team, position), found \(fields.count)"
                    ))
                return
            }
            guard let player = PlayerID(fields[0]) else {
                problems.append(
                    RetrosheetError(
                        file: file, line: number, text: text, reason: "'\(fields[0])' is not a player id"))
                return
            }
            guard ["L", "R", "B", "?"].contains(fields[3]), ["L", "R", "B", "?"].contains(fields[4]) else {
                problems.append(
                    RetrosheetError(
                        file: file, line: number, text: text, reason: "bats and throws must be L, R, B or ?"))
                return
            }
            players.append(
                RosterRecord(
                    player: player, lastName: fields[1], firstName: fields[2], battingHand: fields[3],
                    throwingHand: fields[4],
                    team: fields[5], position: fields[6]))
        }
        return (players, problems)
    }

    static func forEachLine(
        file: String, bytes: [UInt8], _ body: (_ fields: [String], _ number: Int, _ text: String) -> Void
    ) {
        bytes.withUnsafeBufferPointer { buffer in
            var number = 0
            var start = 0
            while start < buffer.count {
                number += 1
                var end = start
                while end < buffer.count && buffer[end] != .newline { end += 1 }
                var contentEnd = end
                while contentEnd > start
                    && (buffer[contentEnd - 1] == .carriageReturn || buffer[contentEnd - 1] == 0x20)
                {
                    contentEnd -= 1
                }
                let line = ByteRange(start: start, end: contentEnd)
                start = end + 1
                if line.isEmpty { continue }
                let fields = RecordFields(buffer, line: line)
                let values = (0..<min(fields.count, RecordFields.capacity)).map { buffer.string(fields[$0]) }
                body(fields.count > RecordFields.capacity ? values + [""] : values, number, buffer.string(line))
            }
        }
    }
}
