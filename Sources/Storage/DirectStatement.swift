import Foundation
import GRDB
import GRDBSQLite

/// A cached statement run many times in one transaction with its values bound through SQLite's
/// C API. For the outbox's hot statements (a fan-out writes 100,000 rows, and the dispatcher
/// finishes each of them), GRDB's per-call arguments — an array of existentials, converted to
/// `DatabaseValue`s, then bound — cost about as much as SQLite's own work on the row.
///
/// Only for statements without observers that need GRDB's bookkeeping: the store has none.
struct DirectStatement {
    private let statement: Statement
    private let connection: SQLiteConnection?

    init(_ db: Database, sql: String) throws {
        statement = try db.cachedStatement(sql: sql)
        connection = db.sqliteConnection
    }

    /// Binds the values `bind` gives, in order, and runs the statement to completion.
    func execute(_ bind: (inout Values) throws -> Void) throws {
        let handle = statement.sqliteStatement
        sqlite3_reset(handle)
        var values = Values(handle: handle)
        try bind(&values)
        if values.result != SQLITE_OK { throw error(values.result) }
        guard values.count == sqlite3_bind_parameter_count(handle) else {
            throw DatabaseError(
                resultCode: .SQLITE_RANGE,
                message: "\(values.count) values bound, \(sqlite3_bind_parameter_count(handle)) expected",
                sql: statement.sql)
        }
        var code = sqlite3_step(handle)
        while code == SQLITE_ROW { code = sqlite3_step(handle) }
        guard code == SQLITE_DONE else { throw error(code) }
    }

    /// Binds the values, then calls `body` with each row until it answers false.
    func forEachRow(_ bind: (inout Values) throws -> Void, _ body: (Row) throws -> Bool) throws {
        let handle = statement.sqliteStatement
        sqlite3_reset(handle)
        defer { sqlite3_reset(handle) }
        var values = Values(handle: handle)
        try bind(&values)
        if values.result != SQLITE_OK { throw error(values.result) }
        var code = sqlite3_step(handle)
        while code == SQLITE_ROW {
            guard try body(Row(handle: handle)) else { return }
            code = sqlite3_step(handle)
        }
        guard code == SQLITE_DONE else { throw error(code) }
    }

    /// Rows changed by the last statement on the connection.
    var changes: Int { connection.map { Int(sqlite3_changes($0)) } ?? 0 }

    /// The current row's columns, valid until the next step.
    struct Row {
        fileprivate let handle: SQLiteStatement

        func int64(_ column: CInt) -> Int64 { sqlite3_column_int64(handle, column) }

        func text(_ column: CInt) -> String? {
            guard let pointer = sqlite3_column_text(handle, column) else { return nil }
            return String(cString: pointer)
        }

        /// The blob's bytes, without copying them.
        func blob(_ column: CInt) -> UnsafeRawBufferPointer {
            let pointer = sqlite3_column_blob(handle, column)
            let count = Int(sqlite3_column_bytes(handle, column))
            guard let pointer, count > 0 else { return UnsafeRawBufferPointer(start: nil, count: 0) }
            return UnsafeRawBufferPointer(start: pointer, count: count)
        }
    }

    private func error(_ code: CInt) -> DatabaseError {
        let message = connection.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) }
        sqlite3_reset(statement.sqliteStatement)
        return DatabaseError(resultCode: ResultCode(rawValue: code), message: message, sql: statement.sql)
    }

    /// The statement's parameters, bound one after another; the first failure is kept.
    struct Values {
        fileprivate let handle: SQLiteStatement
        fileprivate var count: CInt = 0
        fileprivate var result = SQLITE_OK

        fileprivate init(handle: SQLiteStatement) {
            self.handle = handle
        }

        /// The next parameter's index.
        private mutating func next() -> CInt {
            count += 1
            return count
        }

        private mutating func check(_ code: CInt) {
            if result == SQLITE_OK { result = code }
        }

        mutating func bind(_ value: Int64) {
            let index = next()
            check(sqlite3_bind_int64(handle, index, value))
        }

        mutating func bind(_ value: Int) {
            bind(Int64(value))
        }

        mutating func bind(_ value: Bool) {
            bind(Int64(value ? 1 : 0))
        }

        mutating func bind(_ value: Double) {
            let index = next()
            check(sqlite3_bind_double(handle, index, value))
        }

        mutating func bind(_ value: Date) {
            bind(value.timeIntervalSince1970)
        }

        mutating func bind(_ value: String?) {
            guard var value else {
                let index = next()
                return check(sqlite3_bind_null(handle, index))
            }
            value.withUTF8 { bind(bytes: $0) }
        }

        /// A UUID as its uppercase text, the form the store keeps ids in.
        mutating func bind(_ value: UUID) {
            value.withText(uppercase: true) { bind(bytes: $0) }
        }

        mutating func bind(blob: [UInt8]) {
            let index = next()
            let code = blob.withUnsafeBytes {
                sqlite3_bind_blob(
                    handle, index, $0.baseAddress ?? UnsafeRawPointer(bitPattern: 1), CInt($0.count),
                    unsafeBitCast(-1, to: sqlite3_destructor_type.self))
            }
            check(code)
        }

        private mutating func bind(bytes: UnsafeBufferPointer<UInt8>) {
            let index = next()
            // SQLite copies the text (SQLITE_TRANSIENT): the buffer is gone by the step.
            let code = bytes.withMemoryRebound(to: CChar.self) {
                sqlite3_bind_text(
                    handle, index, $0.baseAddress, CInt($0.count), unsafeBitCast(-1, to: sqlite3_destructor_type.self))
            }
            check(code)
        }
    }
}
