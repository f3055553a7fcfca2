import Analytics
import Foundation
import Hummingbird
import JSON
import Synchronization

/// One extraction to a file at a time: each reads a whole collection and writes it to the disk.
final class ExtractionTurn: Sendable {
    private let busy = Mutex(false)

    /// Takes the turn; false when another extraction has it.
    func take() -> Bool {
        busy.withLock { busy in
            guard !busy else { return false }
            busy = true
            return true
        }
    }

    func give() { busy.withLock { $0 = false } }
}

/// Keen's extraction with `email` (`queries/extraction` with `"email": "name@host"`): Keen mails the
/// events as a CSV file. There is no mail server here, so the file is written on the server, under
/// its data directory (`extractions/<project>/`), and the answer says where and how many events it
/// holds (`result`, as Keen's clients read it, then `file` and `events`).
///
/// The file holds every event of the timeframe that passes the filters (those of the key too), with
/// no cap (Keen's is ten million). They are read a page at a time, so the server's memory stays
/// flat, in `(keen.timestamp, keen.id)` order. The columns are `keen.timestamp`, `keen.created_at`
/// and `keen.id`, then one per property of the collection (only those `property_names` names, when
/// given), as the export's CSV. The file is written beside its final name and renamed once
/// whole: a file of that name is never part of one. It asks the master key (it writes a file on
/// the server), one extraction at a time (503 while another is written), and stops at the next
/// page when the server stops.
extension AnalyticsAPI {
    func extractToFile(_ query: KeenQuery, email: String, project: String) async throws -> Response {
        guard let folder = extractions else {
            throw KeenError.badParameter(
                "email", "this server writes no extraction files (it has no data directory for them)")
        }
        guard let collection = query.collection else {
            throw KeenError.missingParameter("event_collection", "for extraction")
        }
        guard let schema = try await store.schema(project: project).first(where: { $0.name == collection }) else {
            throw KeenError.notFound("no event collection '\(collection)' in project \(project)")
        }
        guard extracting.take() else {
            var busy = KeenError(
                status: 503, code: "ServiceUnavailableError",
                "another extraction is being written to a file: ask again when it is done")
            busy.retryAfter = 30
            throw busy
        }
        defer { extracting.give() }
        var paths = EventExport.columns(schema.properties.map(\.path))
        if let names = query.propertyNames {
            paths = paths.filter { path in names.contains { path == $0 || path.hasPrefix($0 + ".") } }
        }
        let directory = URL(fileURLWithPath: folder).appendingPathComponent(Self.fileSafe(project))
        let stamp = Self.fileStamp(clock.now())
        let name = "\(stamp)-\(Self.fileSafe(collection))-\(UUID().uuidString.prefix(8).lowercased()).csv"
        let file = directory.appendingPathComponent(name)
        let partial = directory.appendingPathComponent("." + name + ".part")
        let count: Int
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            guard FileManager.default.createFile(atPath: partial.path, contents: nil) else {
                throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: partial.path])
            }
            let handle = try FileHandle(forWritingTo: partial)
            defer { try? handle.close() }
            count = try await write(query, collection: collection, project: project, paths: paths, to: handle)
            try handle.synchronize()
            try FileManager.default.moveItem(at: partial, to: file)
        } catch {
            try? FileManager.default.removeItem(at: partial)
            logger.error(
                "an extraction could not be written",
                metadata: ["project": "\(project)", "file": "\(file.path)", "error": "\(error)"])
            throw KeenError(
                status: 500, code: "InternalServerError",
                "the extraction could not be written to \(file.path): \(error.localizedDescription)")
        }
        logger.notice(
            "extraction written (no mail server: the file is kept for the address given)",
            metadata: [
                "project": "\(project)", "collection": "\(collection)", "events": "\(count)", "file": "\(file.path)",
                "email": "\(email)",
            ])
        let said =
            "Written to \(file.path) on the server: \(count) events of \(collection) as CSV, "
            + "for \(email) (there is no mail server here to send it)."
        return Self.response(
            .ok,
            body: .object(
                JSONObject([
                    ("result", .string(said)), ("file", .string(file.path)), ("events", .number(Double(count))),
                    ("email", .string(email)),
                ])))
    }

    /// Writes the header and every page; how many events.
    private func write(
        _ query: KeenQuery, collection: String, project: String, paths: [String], to handle: FileHandle
    ) async throws -> Int {
        try handle.write(contentsOf: Data(EventExport.csvHeader(paths).utf8))
        var after: EventExport.Cursor?
        var count = 0
        while true {
            let page = try await store.exportPage(
                project: project, collection: collection, timeframe: query.timeframe ?? .allTime, after: after,
                limit: EventExport.pageSize, filters: query.filters)
            try handle.write(contentsOf: Data(EventExport.text(page, format: .csv, columns: paths).utf8))
            count += page.count
            guard page.count == EventExport.pageSize, let last = page.last else { return count }
            // The server stopping: the file is not finished (and is removed).
            try Task.checkCancellation()
            after = last.cursor
        }
    }

    /// A name as a file's: letters, digits, `.`, `_` and `-`, anything else `_` (never a path).
    static func fileSafe(_ name: String) -> String {
        let kept = name.unicodeScalars.prefix(64).map { scalar -> Character in
            let ok =
                (0x30...0x39).contains(scalar.value) || (0x41...0x5A).contains(scalar.value)
                || (0x61...0x7A).contains(scalar.value) || scalar == "_" || scalar == "-" || scalar == "."
            return ok ? Character(scalar) : "_"
        }
        let text = String(kept)
        return text.allSatisfy { $0 == "." } ? "_" + text : text
    }

    /// `20261129T161500Z`: when the file was made, in UTC.
    static func fileStamp(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .gmt
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        return String(
            format: "%04d%02d%02dT%02d%02d%02dZ", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0, parts.hour ?? 0,
            parts.minute ?? 0, parts.second ?? 0)
    }
}
