import Analytics
import Foundation
import Logging
import NIOCore
import PostgresNIO
import Synchronization

/// One project's events in PostgreSQL, for the query engine: each scan read in pages of a few
/// thousand rows in the primary key's order, each page awaited on the engine's own thread.
struct PostgresEventSource: EventSource, Sendable {
    let client: GuardedPool
    let logger: Logger
    let state: AnalyticsCache.Project
    /// Only events up to this id (the columns' read of a collection as of one moment); all when nil.
    var through: Int64?
    static let page = 4_096

    struct Row: Sendable {
        var id: Int64
        var timestamp: Int64
        var createdAt: Int64
        var data: ByteBuffer
    }

    func paths() throws -> [String] { state.paths }

    func scan(_ scan: ScanPlan, _ body: (EventRow) throws -> Bool) throws {
        guard let collection = state.collections[scan.collection] else { return }
        let (client, logger) = (client, logger)
        let (start, end, newestFirst) = (scan.timeframe.start, scan.timeframe.end, scan.newestFirst)
        var after: (timestamp: Int64, id: Int64)?
        while true {
            let from = after
            let rows = try BlockingBridge.wait { () async throws -> [Row] in
                let (order, past) = newestFirst ? ("DESC", "<") : ("ASC", ">")
                let query: PostgresQuery
                if let from {
                    query = """
                        SELECT id, ts_us, created_us, data FROM analytics_events
                        WHERE collection_id = \(collection) AND ts_us >= \(start) AND ts_us < \(end)
                            AND (ts_us, id) \(unescaped: past) (\(from.timestamp), \(from.id))
                        ORDER BY ts_us \(unescaped: order), id \(unescaped: order) LIMIT \(Self.page)
                        """
                } else {
                    query = """
                        SELECT id, ts_us, created_us, data FROM analytics_events
                        WHERE collection_id = \(collection) AND ts_us >= \(start) AND ts_us < \(end)
                        ORDER BY ts_us \(unescaped: order), id \(unescaped: order) LIMIT \(Self.page)
                        """
                }
                var rows: [Row] = []
                rows.reserveCapacity(Self.page)
                for try await (id, timestamp, createdAt, data) in try await client.query(query, logger: logger)
                    .decode((Int64, Int64, Int64, ByteBuffer).self)
                {
                    rows.append(Row(id: id, timestamp: timestamp, createdAt: createdAt, data: data))
                }
                return rows
            }
            for row in rows where through.map({ row.id <= $0 }) ?? true {
                let goOn = try row.data.withUnsafeReadableBytes { bytes in
                    try body(EventRow(rowID: row.id, timestamp: row.timestamp, createdAt: row.createdAt, data: bytes))
                }
                if !goOn { return }
            }
            guard rows.count == Self.page, let last = rows.last else { return }
            after = (last.timestamp, last.id)
        }
    }

    func count(_ scan: ScanPlan) throws -> Int {
        guard let collection = state.collections[scan.collection] else { return 0 }
        let (client, logger) = (client, logger)
        let (start, end, through) = (scan.timeframe.start, scan.timeframe.end, through ?? .max)
        return try BlockingBridge.wait {
            for try await count in try await client.query(
                """
                SELECT count(*)::int8 FROM analytics_events
                WHERE collection_id = \(collection) AND ts_us >= \(start) AND ts_us < \(end) AND id <= \(through)
                """, logger: logger
            ).decode(Int.self) {
                return count
            }
            return 0
        }
    }
}
