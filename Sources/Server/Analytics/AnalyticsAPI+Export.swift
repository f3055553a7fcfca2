import Analytics
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// Your data out (docs/analytics.md, "Your data out"): `GET /3.0/projects/{id}/events/{collection}/export`
/// with the master key streams a collection's events, every one, in the table's order — NDJSON
/// (each event as an extraction returns it) or CSV (`format=csv`: the `keen` columns, then a column
/// per property path of the collection's schema) — a page at a time, so the server's memory stays
/// flat whatever the size. `timeframe` (and `timezone`) and `filters` narrow it as in a query; a download cut
/// short is resumed with `after_timestamp` and `after_id`, the last event's `keen.timestamp` and
/// `keen.id` received: nothing before or at it is sent again. Not a Keen endpoint (Keen's
/// extractions stop at 100,000 events or mail a file); documented beside them.
extension AnalyticsAPI {
    func addExport(_ project: RouterGroup<APIRequestContext>) {
        project.on("events/:collection/export", method: .options) { _, _ in Self.response(.noContent, body: nil) }
        project.get("events/:collection/export") { request, context in
            await handle {
                let (id, _) = try await authorize(request, context, .master)
                let collection = try context.parameters.require("collection")
                let query = Self.query(request)
                func raw(_ name: String) -> String? { query.first(where: { $0.name == name })?.value }
                let own: Set<String> = ["format", "after_timestamp", "after_id"]
                let parameters = try KeenQuery.parameters(fromQuery: query.filter { !own.contains($0.name) })
                let format = try EventExport.Format.parse(raw("format"))
                let zone = try QueryZone.parse(parameters["timezone"])
                let timeframe = try zone.resolve(parameters["timeframe"], now: now()) ?? .allTime
                let cursor = try EventExport.Cursor.parse(timestamp: raw("after_timestamp"), id: raw("after_id"))
                let filters = try KeenFilter.parseList(parameters["filters"])
                guard let schema = try await store.schema(project: id).first(where: { $0.name == collection }) else {
                    throw KeenError.notFound("no event collection '\(collection)' in project \(id)")
                }
                let paths = EventExport.columns(schema.properties.map(\.path))
                var headers: HTTPFields = [.cacheControl: "no-store", .contentType: format.contentType]
                let name = "\(id)-\(collection).\(format.rawValue)".unicodeScalars.filter {
                    (0x20..<0x7F).contains($0.value) && $0 != "\"" && $0 != "\\"
                }
                headers[.contentDisposition] = "attachment; filename=\"\(String(String.UnicodeScalarView(name)))\""
                for (name, value) in Self.cors { headers[name] = value }
                let store = store
                return Response(
                    status: .ok, headers: headers,
                    body: ResponseBody { writer in
                        // A resumed export continues a file that has its header.
                        if format == .csv && cursor == nil {
                            try await writer.write(ByteBuffer(string: EventExport.csvHeader(paths)))
                        }
                        var after = cursor
                        while true {
                            let page = try await store.exportPage(
                                project: id, collection: collection, timeframe: timeframe, after: after,
                                limit: EventExport.pageSize, filters: filters)
                            if !page.isEmpty {
                                try await writer.write(
                                    ByteBuffer(string: EventExport.text(page, format: format, columns: paths)))
                            }
                            guard page.count == EventExport.pageSize, let last = page.last else { break }
                            after = last.cursor
                        }
                        try await writer.finish(nil)
                    })
            }
        }
    }
}
