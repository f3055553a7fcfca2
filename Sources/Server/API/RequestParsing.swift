import Baseball
import Foundation
import Hummingbird
import NIOCore

/// Reading what a request asks: its JSON body, and the query parameters several routes share.
extension API {
    /// The largest JSON body a route reads (registrations, preferences).
    package static let maximumBody = 16 * 1024
    /// The most items a list answers (`?limit=`).
    package static let maximumList = 200

    /// A JSON body: `application/json` in UTF-8 (415 otherwise), at most `maximumBody` bytes (413),
    /// read strictly (`StrictJSON`: no key twice, none unknown; 400 naming the key).
    static func body(_ request: Request, context: some RequestContext, keys: StrictJSON.Keys) async throws -> Data {
        let type = request.headers[.contentType]?.lowercased().replacingOccurrences(of: " ", with: "") ?? ""
        guard type == "application/json" || type == "application/json;charset=utf-8" else {
            throw error(
                .unsupportedMediaType,
                "the body must be application/json in UTF-8, not \(type.isEmpty ? "untyped" : "'\(type)'")")
        }
        var request = request
        let buffer: ByteBuffer
        do {
            buffer = try await request.collectBody(upTo: maximumBody)
        } catch is NIOTooManyBytesError {
            throw error(.contentTooLarge, "the body is larger than \(maximumBody) bytes")
        }
        let bytes = Array(buffer.readableBytesView)
        do {
            try StrictJSON.check(bytes, keys: keys)
        } catch {
            throw Self.error(.badRequest, "the body is not accepted: \(error)")
        }
        return Data(bytes)
    }

    /// An event id given to resume after (`Last-Event-ID`, `?after=`): a whole number, 0 or more.
    static func eventID(_ text: String?, name: String) throws -> Int? {
        guard let text else { return nil }
        guard let id = Int(text), id >= 0, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else {
            throw error(.badRequest, "\(name) must be an event id (a whole number), not '\(text)'")
        }
        return id
    }

    /// `?delay=`, a spoiler delay: whole seconds from 0 to 300 (0 when not given), rounded up to a
    /// delay the stream is kept behind by (30, 60, 120 or 300), so that every answer and the stream
    /// agree. What the request is shown is the service as it stood that long ago.
    static func delay(_ request: Request) throws -> Int {
        do {
            return DelayedFeeds.delay(for: try WidgetFeed.delay(request.uri.queryParameters.get("delay")) ?? 0)
        } catch {
            throw API.error(.badRequest, "\(error)")
        }
    }

    /// `?limit=` (1 to `maximumList`), else `value`.
    static func limit(_ request: Request, default value: Int) throws -> Int {
        guard let text = request.uri.queryParameters.get("limit") else { return value }
        guard let limit = Int(text), (1...maximumList).contains(limit) else {
            throw error(.badRequest, "limit must be 1 to \(maximumList), not '\(text)'")
        }
        return limit
    }

    /// `?season=YYYY` (1871-2100), else the clock's year.
    static func season(_ request: Request, now: Date) throws -> Int {
        guard let text = request.uri.queryParameters.get("season") else {
            return Calendar(identifier: .gregorian).component(.year, from: now)
        }
        guard text.wholeMatch(of: /[0-9]{4}/) != nil, let season = Int(text), (1871...2100).contains(season) else {
            throw error(.badRequest, "season '\(text)' is not a year 1871-2100")
        }
        return season
    }

    /// `yyyy-mm-dd` of `date` in UTC.
    static func day(_ date: Date) -> String {
        let parts = Calendar(identifier: .gregorian).dateComponents(in: TimeZone(identifier: "UTC")!, from: date)
        return String(format: "%04d-%02d-%02d", parts.year ?? 1970, parts.month ?? 1, parts.day ?? 1)
    }
}

extension API {
    /// A day asked for (`?date=`): `yyyy-mm-dd`, a day the calendar has (not 2020-13-45, not
    /// 2021-02-29).
    static func date(_ text: String?, name: String) throws -> String? {
        guard let text else { return nil }
        guard text.wholeMatch(of: /[0-9]{4}-[0-9]{2}-[0-9]{2}/) != nil else {
            throw error(.badRequest, "\(name) '\(text.prefix(40))' is not yyyy-mm-dd")
        }
        guard Standings.isDay(text) else {
            throw error(.badRequest, "\(name) '\(text)' is not a day of the calendar")
        }
        return text
    }
}
