import Foundation

/// One stored event as a scan hands it over: its columns and its leaves' bytes (valid only
/// during the call).
public struct EventRow {
    public var rowID: Int64
    public var timestamp: Int64
    public var createdAt: Int64
    public var data: UnsafeRawBufferPointer

    public init(rowID: Int64, timestamp: Int64, createdAt: Int64, data: UnsafeRawBufferPointer) {
        self.rowID = rowID
        self.timestamp = timestamp
        self.createdAt = createdAt
        self.data = data
    }
}

/// What a query reads from: one project's events. A store answers the plan's scans (the SQL it
/// runs is the plan's); tests answer them from memory.
public protocol EventSource {
    /// The project's path dictionary: every property path its events have, by number.
    func paths() throws -> [String]
    /// Calls `body` with each event of `scan` (its collection and time range, oldest first or
    /// newest first); `body` answers false to stop.
    func scan(_ scan: ScanPlan, _ body: (EventRow) throws -> Bool) throws
    /// How many events `scan` covers (no filters), without reading them.
    func count(_ scan: ScanPlan) throws -> Int
}

/// What the database does for a query: the events of one collection in a time range, read in
/// the table's `(collection, timestamp, id)` order. Everything else (filters, buckets, groups,
/// aggregates, medians) runs in process over the rows, reading only the properties it needs.
public struct ScanPlan: Sendable, Hashable {
    public var collection: String
    public var timeframe: Timeframe
    public var newestFirst = false

    public init(collection: String, timeframe: Timeframe, newestFirst: Bool = false) {
        self.collection = collection
        self.timeframe = timeframe
        self.newestFirst = newestFirst
    }

    /// The statement, with `?` parameters: collection id, start, end (microseconds).
    public var sql: String {
        "SELECT id, ts_us, created_us, data FROM analytics_events "
            + "WHERE collection_id = ? AND ts_us >= ? AND ts_us < ? ORDER BY ts_us "
            + (newestFirst ? "DESC" : "ASC")
    }

    public var countSQL: String {
        "SELECT count(*) FROM analytics_events WHERE collection_id = ? AND ts_us >= ? AND ts_us < ?"
    }
}
