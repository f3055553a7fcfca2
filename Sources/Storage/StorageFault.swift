import GRDB

/// A write the database could not make for a reason of the machine, not of the request: the disk
/// holding it is full, or the disk failed a read or write. The transaction was rolled back, so
/// nothing of it is stored, and the same write may succeed once the operator has mended the
/// machine: the service's loops wait and try it again (they never pass over what they could not
/// store), and the API refuses the request with 503 instead of acknowledging it.
package struct StorageFault: Error, Sendable, Hashable, CustomStringConvertible {
    package enum Kind: String, Sendable, Hashable {
        /// SQLite's `SQLITE_FULL`: no room left on the disk (or the database's page limit).
        case diskFull = "disk-full"
        /// SQLite's `SQLITE_IOERR` and its extended codes: the operating system failed a read or write.
        case ioError = "io-error"
    }

    package var kind: Kind
    /// The database's own code and message (`SQLite error 13: database or disk is full`).
    package var detail: String

    package init(_ kind: Kind, detail: String) {
        self.kind = kind
        self.detail = detail
    }

    /// The fault `error` is, or nil when it is anything else (a constraint, a malformed request,
    /// a bug: those are not waited out).
    package init?(_ error: any Error) {
        if let fault = error as? StorageFault {
            self = fault
            return
        }
        guard let error = error as? DatabaseError else { return nil }
        let detail = "SQLite error \(error.extendedResultCode.rawValue): \(error.message ?? "no message")"
        switch error.resultCode {
        case .SQLITE_FULL: self.init(.diskFull, detail: detail)
        case .SQLITE_IOERR: self.init(.ioError, detail: detail)
        default: return nil
        }
    }

    /// What is wrong and what it means, in a sentence for the log, `/readyz` and a refused request.
    package var description: String {
        switch kind {
        case .diskFull:
            "the disk holding the database is full (\(detail)): nothing more can be stored until space is freed"
        case .ioError:
            "the disk holding the database failed a write (\(detail)): nothing more can be stored until it is mended"
        }
    }
}
