import Foundation
import GRDB

/// Copies of an SQLite database made while the service may be writing it: SQLite's online backup
/// API (one step, under one read transaction, so the copy is the database as of one commit), and
/// the check a restore makes of what it puts back.
package enum SQLiteBackup {
    /// Copies the database at `source` (which is only read) into a new file at `destination`.
    package static func copy(from source: String, to destination: String) throws {
        guard FileManager.default.fileExists(atPath: source) else {
            throw StoreError.configuration("no database at \(source)")
        }
        guard !FileManager.default.fileExists(atPath: destination) else {
            throw StoreError.configuration("\(destination) is there already: a backup never writes over a file")
        }
        var readOnly = Configuration()
        readOnly.readonly = true
        readOnly.busyMode = .timeout(10)
        do {
            let from = try DatabasePool(path: source, configuration: readOnly)
            let to = try DatabaseQueue(path: destination)
            try from.backup(to: to)
            try to.close()
            try from.close()
        } catch let error as DatabaseError {
            throw StoreError.configuration("cannot copy the database \(source): \(error.message ?? "\(error)")")
        }
    }

    /// SQLite's own check of the file: "ok", or the first problems it found.
    package static func integrity(of path: String) throws -> String {
        var readOnly = Configuration()
        readOnly.readonly = true
        do {
            let queue = try DatabaseQueue(path: path, configuration: readOnly)
            defer { try? queue.close() }
            return try queue.read { db in
                try String.fetchAll(db, sql: "PRAGMA integrity_check(5)").joined(separator: "; ")
            }
        } catch let error as DatabaseError {
            return error.message ?? "\(error)"
        }
    }
}
