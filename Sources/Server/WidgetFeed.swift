import Baseball
import Foundation
import NIOCore
import Scores
import Synchronization

/// The widget feed (`GET /api/widget?teams=…`): ``Widget``'s body for some teams, with an `ETag`
/// so a poll that finds nothing new is a 304 without a body.
///
/// Bodies are made once per team list and board version and shared by every request that asks
/// for them; most polls cost a dictionary lookup and a string comparison.
package final class WidgetFeed: Sendable {
    /// A body ready to send.
    package struct Response: Sendable {
        package var body: ByteBuffer
        /// A strong validator of the body's bytes.
        package var etag: String
        package var next: Int
        package var cacheControl: String
    }

    private struct Entry {
        var version: UInt64
        var response: Response
    }

    private let board: LiveBoard
    private let attemptOuts: Int
    private let cache = Mutex<[String: Entry]>([:])
    /// Distinct team lists kept at most (a list is a sorted set of the thirty clubs).
    private let capacity = 4096

    package init(board: LiveBoard, attemptOuts: Int) {
        self.board = board
        self.attemptOuts = attemptOuts
    }

    /// The clubs named in `text` (`CWS,NYY`; MLB abbreviations or Retrosheet codes, any case), as
    /// franchises; all games when nil or empty. Throws naming a team that is not a club.
    package static func teams(_ text: String?) throws(WidgetError) -> [String] {
        guard let text, !text.isEmpty else { return [] }
        let names = text.split(separator: ",", omittingEmptySubsequences: false)
        guard names.count <= 30 else { throw WidgetError("at most 30 teams, not \(names.count)") }
        var codes = Set<String>()
        for name in names {
            // ASCII letters upper-cased, spaces around dropped (a club's code is ASCII).
            let bytes = name.utf8.drop { $0 == UInt8(ascii: " ") }.reversed().drop { $0 == UInt8(ascii: " ") }
                .reversed().map { $0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "z") ? $0 - 32 : $0 }
            guard let club = TeamDirectory.current(String(decoding: bytes, as: UTF8.self)) else {
                throw WidgetError(
                    "team '\(name.prefix(40))' is not a major league club (MLB's abbreviation such as CWS, or "
                        + "Retrosheet's code such as CHA)")
            }
            codes.insert(club.franchise)
        }
        return codes.sorted()
    }

    /// The longest spoiler delay a request may ask for, in seconds.
    package static let maximumDelay = Int(LiveBoard.historySpan)

    /// The seconds of `text` (`?delay=`): 0 to 300; nil when not given.
    package static func delay(_ text: String?) throws(WidgetError) -> Int? {
        guard let text else { return nil }
        guard let seconds = Int(text), (0...maximumDelay).contains(seconds) else {
            throw WidgetError("delay must be whole seconds from 0 to \(maximumDelay), not '\(text.prefix(20))'")
        }
        return seconds
    }

    /// The feed for `teams` held back `delay` seconds behind `now` (a spoiler delay): the games as
    /// they stood then, so nothing is shown before its time plus the delay. Made for each request
    /// (the board of a moment ago changes with the clock, not with the board's version).
    package func response(teams: [String], delay: Int, now: Date, isPrivate: Bool = false) -> Response {
        guard delay > 0 else { return response(teams: teams, isPrivate: isPrivate) }
        // Shown as of a whole second: widgets asking within the same second (and board version)
        // share one body.
        let asOf = (now.timeIntervalSince1970 - Double(delay)).rounded(.down)
        let key = (isPrivate ? "p:" : "") + "d\(delay)@\(Int(asOf)):" + teams.joined(separator: ",")
        let version = board.version
        if let entry = cache.withLock({ $0[key] }), entry.version == version { return entry.response }
        var body = Widget.body(
            board.all(asOf: Date(timeIntervalSince1970: asOf)), teams: Set(teams), attemptOuts: attemptOuts)
        body.delay = delay
        let response = Self.response(body, isPrivate: isPrivate)
        cache.withLock { cache in
            if cache.count >= capacity { cache.removeAll(keepingCapacity: true) }
            cache[key] = Entry(version: version, response: response)
        }
        return response
    }

    /// The feed for `teams` (franchises, sorted; empty for every game).
    package func response(teams: [String], isPrivate: Bool = false) -> Response {
        let key = (isPrivate ? "p:" : "") + teams.joined(separator: ",")
        let version = board.version
        if let entry = cache.withLock({ $0[key] }), entry.version == version {
            return entry.response
        }
        let response = make(teams: teams, isPrivate: isPrivate)
        cache.withLock { cache in
            if cache.count >= capacity { cache.removeAll(keepingCapacity: true) }
            cache[key] = Entry(version: version, response: response)
        }
        return response
    }

    private func make(teams: [String], isPrivate: Bool) -> Response {
        Self.response(Widget.body(board.all, teams: Set(teams), attemptOuts: attemptOuts), isPrivate: isPrivate)
    }

    private static func response(_ body: Widget.Body, isPrivate: Bool) -> Response {
        let data = (try? WidgetFeed.encoder.encode(body)) ?? Data("{}".utf8)
        let maxAge = body.next <= 10 ? 5 : min(body.next, 60)
        return Response(
            body: ByteBuffer(bytes: data), etag: etag(data), next: body.next,
            cacheControl: "\(isPrivate ? "private" : "public"), max-age=\(maxAge)")
    }

    /// A strong validator: 64-bit FNV-1a of the bytes, quoted.
    static func etag(_ data: Data) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in data {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return "\"\(String(hash, radix: 16))-\(data.count)\""
    }

    /// Whether an `If-None-Match` value names `etag` (a list, `*`, weak validators compared weakly).
    package static func matches(_ header: String?, etag: String) -> Bool {
        guard let header else { return false }
        // What a widget sends: the one validator it got.
        if header == etag { return true }
        for candidate in header.split(separator: ",") {
            var tag = candidate.drop { $0 == " " }
            while tag.last == " " { tag = tag.dropLast() }
            if tag == "*" { return true }
            if tag.hasPrefix("W/") { tag = tag.dropFirst(2) }
            if tag == etag { return true }
        }
        return false
    }

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()
}

/// A widget request that names no club.
package struct WidgetError: Error, CustomStringConvertible {
    package var description: String
    init(_ description: String) { self.description = description }
}
