import Foundation
import JSON

/// A collection's events written out whole for their owner (docs/analytics.md, "Your data out"):
/// in the table's `(timestamp, id)` order, a page at a time, so an export of any size holds one
/// page in memory; each event as Keen returns it (NDJSON) or as a row with a column per property
/// path (CSV). An export is resumed after its last event: its `keen.timestamp` (to the
/// microsecond) and `keen.id` are the cursor, and nothing before or at it is written again.
public enum EventExport {
    public enum Format: String, Sendable, CaseIterable {
        case ndjson, csv

        /// The format a parameter names (`name`, for its error); NDJSON when it names none.
        public static func parse(_ text: String?, name: String = "format") throws(KeenError) -> Format {
            guard let text else { return .ndjson }
            guard let format = Format(rawValue: text.lowercased()) else {
                throw .badParameter(name, "'\(text.prefix(40))' is not a format of an export: ndjson or csv")
            }
            return format
        }

        public var contentType: String {
            switch self {
            case .ndjson: "application/x-ndjson"
            case .csv: "text/csv; charset=utf-8"
            }
        }
    }

    /// Where an export stopped: its last event's timestamp and row id.
    public struct Cursor: Sendable, Hashable {
        public var timestamp: Int64
        public var rowID: Int64

        public init(timestamp: Int64, rowID: Int64) {
            self.timestamp = timestamp
            self.rowID = rowID
        }

        /// The cursor of a resumed export from its two parameters, the last event's `keen.timestamp`
        /// and `keen.id`: both or neither (nil). `names` are what the caller calls them, for errors.
        public static func parse(
            timestamp text: String?, id: String?,
            names: (timestamp: String, id: String) = ("after_timestamp", "after_id")
        ) throws(KeenError) -> Cursor? {
            guard let text, let id else {
                guard text == nil && id == nil else {
                    throw .badParameter(
                        text == nil ? names.timestamp : names.id,
                        "a resumed export names its last event by both \(names.timestamp) and \(names.id)")
                }
                return nil
            }
            guard let timestamp = KeenTime.parse(text) else {
                throw .badParameter(
                    names.timestamp, "'\(text.prefix(64))' is not a timestamp (the last event's keen.timestamp)")
            }
            guard id.utf8.count == 24, let bits = UInt64(id, radix: 16) else {
                throw .badParameter(
                    names.id, "'\(id.prefix(64))' is not an event id (the last event's keen.id: 24 hex digits)")
            }
            return Cursor(timestamp: timestamp, rowID: Int64(bitPattern: bits))
        }
    }

    /// Events read per page of an export.
    public static let pageSize = 2_000

    /// A page's events as `format` writes them (`columns`: a CSV's, from ``columns(_:)``).
    public static func text(_ page: [Event], format: Format, columns: [String]) -> String {
        var text = ""
        for event in page { text += format == .csv ? csvRow(event, paths: columns) : ndjsonLine(event) }
        return text
    }

    /// The path of a leaf whose number the dictionary read before the page does not hold (a store
    /// whose other writers add paths reads the page again): "." is no property's path (a name holds
    /// no dot and is never empty).
    public static let unknownPath = "."

    /// One event of a page.
    public struct Event: Sendable {
        public var cursor: Cursor
        public var createdAt: Int64
        public var leaves: [EventLeaf]
    }

    /// Up to `limit` events of `collection` in `timeframe` after `cursor` that pass `filters`, in
    /// order. The scan starts at the cursor's timestamp and passes over the events at that
    /// timestamp up to its id.
    public static func page(
        collection: String, timeframe: Timeframe, after cursor: Cursor?, limit: Int, filters: [KeenFilter] = [],
        from source: some EventSource
    ) throws -> [Event] {
        let paths = try source.paths()
        var reader = QueryEngine.Reader(pathCount: paths.count)
        let compiled = QueryEngine.compile(filters, reader: &reader, paths: paths)
        // Regular expressions are bounded per value, not per export.
        var meter = QueryMeter(budget: .unlimited)
        var plan = ScanPlan(collection: collection, timeframe: timeframe)
        if let cursor { plan.timeframe.start = max(timeframe.start, cursor.timestamp) }
        guard plan.timeframe.start < plan.timeframe.end else { return [] }
        var events: [Event] = []
        events.reserveCapacity(min(limit, 10_000))
        try source.scan(plan) { row in
            if let cursor, (row.timestamp, row.rowID) <= (cursor.timestamp, cursor.rowID) { return true }
            if !compiled.isEmpty {
                reader.read(row)
                for filter in compiled where try !filter.matches(reader.values, meter: &meter) { return true }
            }
            let leaves = EventCodec.decode(row.data).map { leaf in
                EventLeaf(path: leaf.pathID < paths.count ? paths[leaf.pathID] : unknownPath, value: leaf.value)
            }
            events.append(
                Event(
                    cursor: Cursor(timestamp: row.timestamp, rowID: row.rowID), createdAt: row.createdAt,
                    leaves: leaves))
            return events.count < limit
        }
        return events
    }

    /// The event as Keen returns it, on one line.
    public static func ndjsonLine(_ event: Event) -> String {
        KeenEventRules.rebuild(
            leaves: event.leaves, timestamp: event.cursor.timestamp, createdAt: event.createdAt,
            id: QueryEngine.eventID(event.cursor.rowID)
        ).jsonText + "\n"
    }

    /// The `keen` columns every CSV row starts with.
    public static let keenColumns = ["keen.timestamp", "keen.created_at", "keen.id"]

    /// The CSV columns of a collection whose schema lists `paths` (sorted, a path once per type it
    /// was seen with): each path once, the `keen` ones left to their own columns.
    public static func columns(_ paths: [String]) -> [String] {
        var columns: [String] = []
        for path in paths where !path.hasPrefix("keen.") && columns.last != path { columns.append(path) }
        return columns
    }

    /// The CSV header: the `keen` columns, then `paths`.
    public static func csvHeader(_ paths: [String]) -> String {
        (keenColumns + paths).map(csvField).joined(separator: ",") + "\r\n"
    }

    /// The event as a CSV row of `paths` (RFC 4180): a string as it is, a number as JSON writes it,
    /// true or false, an empty field for null or a missing property, a list or an empty object as
    /// its JSON.
    public static func csvRow(_ event: Event, paths: [String]) -> String {
        var values: [String: FieldValue] = [:]
        for leaf in event.leaves { values[leaf.path] = leaf.value }
        var fields = [
            KeenTime.format(event.cursor.timestamp), KeenTime.format(event.createdAt),
            QueryEngine.eventID(event.cursor.rowID),
        ]
        for path in paths {
            switch values[path] {
            case nil, .null?: fields.append("")
            case .bool(let flag)?: fields.append(flag ? "true" : "false")
            case .number(let number)?: fields.append(JSONValue.number(number).jsonText)
            case .string(let text)?: fields.append(text)
            case .list(let elements)?: fields.append(JSONValue.array(elements).jsonText)
            case .emptyObject?: fields.append("{}")
            }
        }
        return fields.map(csvField).joined(separator: ",") + "\r\n"
    }

    /// A field quoted when it holds a comma, a quote or a line break (its quotes doubled).
    static func csvField(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 == 0x2C || $0 == 0x22 || $0 == 0x0A || $0 == 0x0D }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
