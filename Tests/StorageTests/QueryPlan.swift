import GRDB

@testable import Storage

/// What SQLite plans for a statement on the fully migrated schema (`EXPLAIN QUERY PLAN`, each
/// step's detail), for the tests that keep hot queries on their indexes.
enum QueryPlan {
    static func steps(_ sql: String) throws -> [String] {
        let queue = try DatabaseQueue()
        try SQLiteStore.migrator.migrate(queue)
        return try queue.read { db in
            // Any values do: the plan does not depend on them (no literal "?" in these queries).
            let values = [DatabaseValue](repeating: .null, count: sql.filter { $0 == "?" }.count)
            return try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: StatementArguments(values)).map {
                $0["detail"] as String
            }
        }
    }
}
