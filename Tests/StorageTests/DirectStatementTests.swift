import Foundation
import GRDB
import Testing

@testable import Storage

/// The outbox's hot statements bind through SQLite's C API: what they write must read back as
/// GRDB would have written it, and a failure must say what and where, and leave nothing behind.
@Suite struct DirectStatementTests {
    private func database() throws -> DatabaseQueue {
        let queue = try DatabaseQueue()
        try queue.write { db in
            try db.execute(
                sql: "CREATE TABLE t (id TEXT NOT NULL UNIQUE, name TEXT, count INTEGER NOT NULL, at REAL NOT NULL)")
        }
        return queue
    }

    @Test func valuesReadBackAsBound() throws {
        let queue = try database()
        let id = UUID()
        let at = Date(timeIntervalSince1970: 1_598_400_000.25)
        try queue.write { db in
            let insert = try DirectStatement(db, sql: "INSERT INTO t (id, name, count, at) VALUES (?, ?, ?, ?)")
            try insert.execute { row in
                row.bind(id)
                row.bind("Lucas Giolito — ½" as String?)
                row.bind(Int64(13))
                row.bind(at)
            }
            try insert.execute { row in
                row.bind(UUID())
                row.bind(nil as String?)
                row.bind(true)
                row.bind(0.5)
            }
        }
        let rows = try queue.read { db in try Row.fetchAll(db, sql: "SELECT id, name, count, at FROM t ORDER BY rowid")
        }
        #expect(rows.count == 2)
        #expect(rows[0][0] as String == id.uuidString)
        #expect(rows[0][1] as String? == "Lucas Giolito — ½")
        #expect(rows[0][2] as Int64 == 13)
        #expect(rows[0][3] as Double == at.timeIntervalSince1970)
        #expect(rows[1][1] as String? == nil)
        #expect(rows[1][2] as Int64 == 1)
    }

    @Test func aConstraintFailureSaysWhichAndTheStatementStillWorks() throws {
        let queue = try database()
        let id = UUID()
        try queue.write { db in
            let insert = try DirectStatement(db, sql: "INSERT INTO t (id, name, count, at) VALUES (?, ?, ?, ?)")
            try insert.execute { row in
                row.bind(id)
                row.bind("first" as String?)
                row.bind(1)
                row.bind(0.0)
            }
            let error = #expect(throws: DatabaseError.self) {
                try insert.execute { row in
                    row.bind(id)
                    row.bind("again" as String?)
                    row.bind(2)
                    row.bind(0.0)
                }
            }
            #expect(error?.resultCode == .SQLITE_CONSTRAINT)
            #expect(error?.message?.contains("t.id") == true)
            #expect(error?.sql?.contains("INSERT INTO t") == true)
            try insert.execute { row in
                row.bind(UUID())
                row.bind("after" as String?)
                row.bind(3)
                row.bind(0.0)
            }
        }
        let names = try queue.read { db in try String.fetchAll(db, sql: "SELECT name FROM t ORDER BY rowid") }
        #expect(names == ["first", "after"])
    }

    @Test func tooFewValuesAreRefusedBeforeRunning() throws {
        let queue = try database()
        try queue.write { db in
            let insert = try DirectStatement(db, sql: "INSERT INTO t (id, name, count, at) VALUES (?, ?, ?, ?)")
            let error = #expect(throws: DatabaseError.self) {
                try insert.execute { row in
                    row.bind(UUID())
                    row.bind("short" as String?)
                }
            }
            #expect(error?.resultCode == .SQLITE_RANGE)
            #expect(error?.message == "2 values bound, 4 expected")
        }
        #expect(try queue.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM t") } == 0)
    }
}
