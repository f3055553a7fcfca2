import Foundation
import Retrosheet
import TestSupport
import Testing

/// Real games from `2020CHA.EVA` with one line damaged in each way that loses a game: the damaged
/// game fails with an error naming the file, line and text, and the game after it reads exactly
/// as if nothing had happened. (Damage read anyway, by kind: `DamagedRecordKindsTests`.)
@Suite struct DamagedFileTests {
    struct Damage: Sendable, CustomTestStringConvertible {
        var name: String
        /// Picks the line to damage in the first game's lines and returns its index and new text
        /// (nil text: the line is cut off with the end of the file after it).
        var apply: @Sendable ([String]) -> (index: Int, text: String)
        var reason: String
        var testDescription: String { name }
    }

    static func firstLine(_ lines: [String], where predicate: (String) -> Bool) -> Int {
        lines.firstIndex(where: predicate)!
    }

    static func isRealPlay(_ line: String) -> Bool {
        line.hasPrefix("play,") && !line.hasSuffix(",NP") && line.split(separator: ",").count == 7
    }

    static let damages: [Damage] = [
        Damage(
            name: "unknown record type",
            apply: { lines in
                let index = firstLine(lines) { $0.hasPrefix("com,") }
                return (index, "comment" + lines[index].dropFirst(3))
            }, reason: "unknown record type 'comment'"),
        Damage(
            name: "malformed event",
            apply: { lines in
                let index = firstLine(lines) { isRealPlay($0) && $0.hasSuffix(",K") }
                return (index, String(lines[index].dropLast()) + "Q(7")
            }, reason: "malformed event"),
        Damage(
            name: "event with an advance to nowhere",
            apply: { lines in
                let index = firstLine(lines) { isRealPlay($0) && $0.contains(".1-2") }
                return (index, lines[index].replacingOccurrences(of: ".1-2", with: ".1-5"))
            }, reason: "expected a base (1, 2, 3 or H)"),
        Damage(
            name: "play for a player not in the game",
            apply: { lines in
                let index = firstLine(lines, where: isRealPlay)
                var fields = lines[index].split(separator: ",", omittingEmptySubsequences: false).map(String.init)
                fields[3] = "nobod001"
                return (index, fields.joined(separator: ","))
            }, reason: "batter nobod001 is not in the lineup"),
        Damage(
            name: "truncated starting lineup",
            apply: { lines in
                let index = firstLine(lines) { $0.hasPrefix("start,") }
                return (index, lines[index].split(separator: ",").prefix(5).joined(separator: ","))
            }, reason: "starting lineup is incomplete"),
        Damage(
            name: "game without its id",
            apply: { lines in (0, "id") }, reason: "an id record needs the game id"),
        Damage(
            name: "unterminated quote",
            apply: { lines in
                let index = firstLine(lines) { $0.hasPrefix("start,") }
                return (index, String(lines[index].prefix(while: { $0 != "," })) + ",keplm001,\"Max Kepler")
            }, reason: "a quoted field has no closing quote"),
        Damage(
            name: "inning that is not a number",
            apply: { lines in
                let index = firstLine(lines, where: isRealPlay)
                var fields = lines[index].split(separator: ",", omittingEmptySubsequences: false).map(String.init)
                fields[1] = "first"
                return (index, fields.joined(separator: ","))
            }, reason: "inning must be a number"),
    ]

    /// The lines of the first two games of the file.
    static func twoGames() throws -> (first: [String], second: [String]) {
        let lines = try TestData.lines("retrosheet/2020/2020CHA.EVA").map(String.init)
        let ids = lines.indices.filter { lines[$0].hasPrefix("id,") }
        return (Array(lines[ids[0]..<ids[1]]), Array(lines[ids[1]..<ids[2]]))
    }

    static func read(_ lines: [String], file: String) -> [Result<GameRecord, RetrosheetError>] {
        EventFileReader(file: file, bytes: Array((lines.joined(separator: "\n") + "\n").utf8)).games()
    }

    static func replay(_ result: Result<GameRecord, RetrosheetError>) -> Result<[UInt8], RetrosheetError> {
        result.flatMap { game in Result { () throws(RetrosheetError) in try CWEventCSV.rows(of: game) } }
    }

    @Test(arguments: damages)
    func damagedGameIsSkippedAndTheNextIsRead(damage: Damage) throws {
        let (first, second) = try Self.twoGames()
        let pristine = Self.read(first + second, file: "2020CHA.EVA").map(Self.replay)
        let expectedSecond = try pristine[1].get()

        var damaged = first
        let (index, text) = damage.apply(first)
        damaged[index] = text
        let results = Self.read(damaged + second, file: "2020CHA.EVA").map(Self.replay)

        #expect(results.count == 2)
        guard case .failure(let error) = results[0] else {
            Issue.record("the damaged game was read without an error")
            return
        }
        #expect(error.file == "2020CHA.EVA")
        if index > 0 {  // an incomplete lineup is the game's, said at its id
            #expect(error.line == index + 1 || (error.line == 1 && error.text == first[0]))
            #expect(error.text == text || error.text == first[0])
            #expect(error.gameID == "CHA202007240")
        } else {
            #expect(error.line == 1 && error.text == text)
        }
        #expect(error.reason.contains(damage.reason), "reason was: \(error.reason)")
        #expect(error.description.hasPrefix("2020CHA.EVA:\(error.line): "))
        #expect(try results[1].get() == expectedSecond)
    }

    /// A damaged record that is read anyway: a warning with file and line, and the game read as
    /// if it were whole (its rows equal the pristine game's).
    @Test(
        arguments: [
            // Seen in a real file: tabs and a stray field in the version record.
            (
                "version", "version,2\t\t ,am,phi",
                "a version record is read from 1 field, found 3; the rest are ignored"
            ),
            ("com", "com", "a com record needs its text"),
            ("info,umphome", "info,umphome,wolfj901,extra", "an info record is read from 2 fields, found 3"),
            // Seen in seasons this project had not read: a save left empty with a stray comma.
            ("info,save", "info,save,,", "an info record is read from 2 fields, found 3; the rest is ignored"),
            ("info,wp", "info,wp,", nil),
            // More fields than the eight a record keeps: the first values, not a lost game.
            ("data", "data,er,keucd001,0,1,2,3,4,5,6", "a data record is read from 7 fields, found 9"),
        ] as [(String, String, String?)])
    func harmlessDamageIsAWarningAndTheGameIsRead(prefix: String, text: String, reason: String?) throws {
        let (first, second) = try Self.twoGames()
        let pristine = Self.read(first + second, file: "2020CHA.EVA").map(Self.replay)
        var damaged = first
        let index = Self.firstLine(first) { $0.hasPrefix(prefix) }
        damaged[index] = text
        let games = Self.read(damaged + second, file: "2020CHA.EVA")
        let game = try games[0].get()
        #expect(game.warnings.count == (reason == nil ? 0 : 1))
        #expect(try Self.replay(.success(game)).get() == (try pristine[0].get()))
        #expect(try Self.replay(games[1]).get() == (try pristine[1].get()))
        guard let reason else { return }
        let warning = try #require(game.warnings.first)
        #expect(warning.line == index + 1)
        #expect(warning.text == text.trimmingCharacters(in: .whitespaces))
        #expect(warning.reason.contains(reason), "\(warning.reason)")
        #expect(warning.description.hasPrefix("2020CHA.EVA:\(index + 1): "))
    }

    @Test func fileCutOffInTheMiddleOfAGame() throws {
        let (first, second) = try Self.twoGames()
        let cut = Array(second.prefix(120))
        let lastLine = cut[cut.count - 1]
        let truncated = cut.dropLast() + [String(lastLine.prefix(12))]
        // Cut off: no line end after the last line (a line short of its fields that has one is
        // a damaged record, skipped as cwevent skips it).
        let bytes = Array((first + truncated).joined(separator: "\n").utf8)
        let results = EventFileReader(file: "2020CHA.EVA", bytes: bytes).games()
        #expect(results.count == 2)
        #expect((try? Self.replay(results[0]).get()) != nil)
        guard case .failure(let error) = results[1] else {
            Issue.record("a game cut off mid-line was read without an error")
            return
        }
        #expect(error.line == first.count + cut.count)
        #expect(error.text == String(lastLine.prefix(12)))
        #expect(error.reason.hasPrefix("the file ends in the middle of a"), "\(error.reason)")
    }

    @Test func recordsBeforeTheFirstGameAreReported() {
        let results = Self.read(["info,visteam,MIN"], file: "stray.EVA")
        #expect(results.count == 1)
        guard case .failure(let error) = results[0] else {
            Issue.record("expected an error")
            return
        }
        #expect(error.reason == "record before the first id record")
        #expect(error.line == 1)
    }
}
