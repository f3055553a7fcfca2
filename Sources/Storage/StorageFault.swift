import GRDB
import PostgresNIO
import _ConnectionPoolModule

/// A write the database could not make for a reason of the machine, not of the request: the disk
/// holding it is full, the disk failed a read or write, or (PostgreSQL) the server cannot be
/// reached or is restarting. The same write may succeed once the machine is mended: the service's
/// loops wait and try it again (they never pass over what they could not store; each of their
/// writes may be made twice, as a connection lost during a commit may have committed it), and the
/// API refuses the request with 503 instead of acknowledging it.
package struct StorageFault: Error, Sendable, Hashable, CustomStringConvertible {
    package enum Kind: String, Sendable, Hashable {
        /// SQLite's `SQLITE_FULL`: no room left on the disk (or the database's page limit).
        case diskFull = "disk-full"
        /// SQLite's `SQLITE_IOERR` and its extended codes: the operating system failed a read or write.
        case ioError = "io-error"
        /// PostgreSQL: the connection was lost or refused, or the server is shutting down,
        /// starting, or out of connections.
        case unreachable
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
        if let error = error as? PSQLError {
            self.init(postgres: error)
            return
        }
        // PostgresNIO's pool, after failing to connect for a while (PostgreSQL away), refuses
        // requests at once for a time: the database unreachable, waited out like any other (taken
        // for something else, it ended two replay instances 55 s into a restart).
        if let error = error as? ConnectionPoolError, error == .connectionCreationCircuitBreakerTripped {
            self.init(.unreachable, detail: "no connection to PostgreSQL could be made for a while")
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

    private init?(postgres error: PSQLError) {
        switch error.code {
        case .clientClosedConnection:
            // Closed after the server ended the session (25P03: idle in a transaction while this
            // process was paused; 57P01: shut down), found by the next statement: the server's
            // reason is underneath. Closed by this process itself (stopping), nothing is.
            guard let underlying = error.underlying as? PSQLError else { return nil }
            if let fault = Self(postgres: underlying) {
                self = fault
            } else {
                self.init(.unreachable, detail: "the connection was closed: \(underlying.code)")
            }
        case .serverClosedConnection, .connectionError, .uncleanShutdown:
            self.init(.unreachable, detail: "\(error.code)" + (error.underlying.map { ": \($0)" } ?? ""))
        case .server:
            let state = error.serverInfo?[.sqlState] ?? ""
            let detail = (error.serverInfo?[.message] ?? "no message") + " (SQLSTATE \(state))"
            switch state {
            // disk_full, io_error
            case "53100": self.init(.diskFull, detail: detail)
            case "58030": self.init(.ioError, detail: detail)
            // Connection exceptions; admin, crash shutdown, cannot connect now; too many connections;
            // a session ended for idling in a transaction (its process was paused).
            case _ where state.hasPrefix("08"), "57P01", "57P02", "57P03", "53300", "25P03":
                self.init(.unreachable, detail: detail)
            default: return nil
            }
        default:
            return nil
        }
    }

    /// What is wrong and what it means, in a sentence for the log, `/readyz` and a refused request.
    package var description: String {
        switch kind {
        case .diskFull:
            "the disk holding the database is full (\(detail)): nothing more can be stored until space is freed"
        case .ioError:
            "the disk holding the database failed a write (\(detail)): nothing more can be stored until it is mended"
        case .unreachable:
            "the database cannot be reached (\(detail)): nothing more can be stored until it answers again"
        }
    }
}
