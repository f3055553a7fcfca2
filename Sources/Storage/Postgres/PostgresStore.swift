import Foundation
import Logging
import NIOCore
import PostgresNIO
import Synchronization

/// Every store on PostgreSQL, for several instances of the service sharing one database: the same
/// store protocols as ``SQLiteStore`` (one contract suite runs against both), plus what instances
/// agree through the database (``CoordinationStore``): outbox rows claimed with `FOR UPDATE SKIP
/// LOCKED` under a lease, one instance following each game, the shared game log, and
/// `LISTEN`/`NOTIFY` wake-ups.
///
/// The client's connection pool runs for as long as ``withStore(_:secrets:instance:logger:_:)``'s
/// body does: the store is usable inside it only.
package final class PostgresStore: Sendable {
    /// Where and how to connect, read from a `postgres://` URL.
    package struct Location: Sendable, Hashable, CustomStringConvertible {
        package var host: String
        package var port: Int
        package var username: String
        package var password: String?
        package var database: String
        /// `disable` (the default), `prefer` or `require` (TLS with the server's certificate
        /// verified against the system's authorities).
        package var tls: String
        /// Tables live in this schema (created when missing); `public` by default. Tests give each
        /// store a schema of its own.
        package var schema: String

        /// Reads `postgres://user[:password]@host[:port]/database[?sslmode=…&schema=…]` (or
        /// `postgresql://`). A password may also come from `$PGPASSWORD`.
        package init(url text: String) throws {
            guard let components = URLComponents(string: text),
                let scheme = components.scheme?.lowercased(), ["postgres", "postgresql"].contains(scheme)
            else { throw StoreError.configuration("'\(text)' is not a postgres:// URL") }
            guard let host = components.host, !host.isEmpty else {
                throw StoreError.configuration("the database URL names no host: \(Self.redacted(text))")
            }
            guard let user = components.user, !user.isEmpty else {
                throw StoreError.configuration("the database URL names no user: \(Self.redacted(text))")
            }
            let database = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
            guard !database.isEmpty, !database.contains("/") else {
                throw StoreError.configuration("the database URL names no database: \(Self.redacted(text))")
            }
            self.host = host
            port = components.port ?? 5432
            username = user.removingPercentEncoding ?? user
            password =
                components.password.map { $0.removingPercentEncoding ?? $0 }
                ?? ProcessInfo.processInfo.environment["PGPASSWORD"]
            self.database = database
            tls = "disable"
            schema = "public"
            for item in components.queryItems ?? [] {
                switch item.name {
                case "sslmode":
                    guard let value = item.value, ["disable", "prefer", "require"].contains(value) else {
                        throw StoreError.configuration("sslmode must be disable, prefer or require")
                    }
                    tls = value
                case "schema":
                    guard let value = item.value, value.wholeMatch(of: /[a-z_][a-z0-9_]{0,62}/) != nil else {
                        throw StoreError.configuration(
                            "the schema must be a lower-case SQL name (letters, digits, _), not '\(item.value ?? "")'")
                    }
                    schema = value
                default:
                    throw StoreError.configuration("unknown database URL parameter '\(item.name)'")
                }
            }
        }

        /// The URL without its password, for messages.
        package var description: String {
            "postgres://\(username)@\(host):\(port)/\(database)" + (schema == "public" ? "" : "?schema=\(schema)")
        }

        static func redacted(_ text: String) -> String {
            text.replacing(/:[^:@\/]*@/, with: ":…@")
        }

        /// Whether `text` names a PostgreSQL database rather than an SQLite file.
        package static func isURL(_ text: String) -> Bool {
            let lower = text.lowercased()
            return lower.hasPrefix("postgres://") || lower.hasPrefix("postgresql://")
        }
    }

    /// The pool, through which every statement is sent on a connection checked for having closed
    /// (``GuardedPool``).
    let client: GuardedPool
    let location: Location
    let logger: Logger
    /// Seals the secrets kept for sending (webhook and Web Push auth secrets).
    let secrets: SecretBox
    /// This instance's name in leases and the game log.
    package let instanceID: String
    /// How long a claimed delivery or a followed game stays this instance's without a renewal.
    package let leaseSeconds: Double
    /// No statement of nohit's takes this long (the server's lock timeout, set below, is 30 s): one
    /// unanswered for it has lost its connection (``HeldConnection``).
    package static let statementDeadline = Duration.seconds(120)
    let payloadCache = PayloadCache()
    /// Each analytics project's dictionary (collections, property paths, schema) as of its version.
    let analytics = AnalyticsCache()
    /// This instance's renewals of its delivery leases that succeeded, each asked less than half
    /// a lease after the one before: when the first and the last were asked.
    let renewals = Mutex<(start: ContinuousClock.Instant, last: ContinuousClock.Instant)?>(nil)
    /// The deliveries this store's claims handed out and no outcome or release has given back:
    /// the only rows whose leases are renewed. A claim that committed but whose answer was lost
    /// (the connection dropped at its commit) is in no dispatcher's hands: its rows are not renewed,
    /// so their leases lapse and they are taken back in doubt and sent, rather than held for ever.
    let held = Mutex<Set<UUID>>([])

    /// Payload bodies by id: a fan-out's rows share a handful.
    final class PayloadCache: Sendable {
        private let bodies = Mutex<[Int64: Data]>([:])

        func body(_ id: Int64) -> Data? { bodies.withLock { $0[id] } }

        func keep(_ id: Int64, _ body: Data) {
            bodies.withLock {
                if $0.count > 1024 { $0.removeAll() }
                $0[id] = body
            }
        }
    }

    private init(
        client: PostgresClient, location: Location, secrets: SecretBox, instanceID: String, leaseSeconds: Double,
        deadline: Duration, logger: Logger
    ) {
        self.client = GuardedPool(pool: client, deadline: deadline)
        self.location = location
        self.secrets = secrets
        self.instanceID = instanceID
        self.leaseSeconds = leaseSeconds
        self.logger = logger
    }

    /// The same store (connections, instance, caches of nothing yet used) sealing with `secrets`.
    private func with(secrets: SecretBox) -> PostgresStore {
        PostgresStore(
            client: client.pool, location: location, secrets: secrets, instanceID: instanceID,
            leaseSeconds: leaseSeconds, deadline: client.deadline, logger: logger)
    }

    /// Stored secrets sealed with the secrets key.
    func sealedSecretCount() async throws -> Int {
        let rows = try await client.query(
            """
            SELECT count(*)::bigint FROM devices
            WHERE (channel = 'webhook' AND key1 LIKE 'enc1:%') OR (channel = 'web-push' AND key2 LIKE 'enc1:%')
            """, logger: logger)
        for try await count in rows.decode(Int64.self) { return Int(count) }
        return 0
    }

    /// Connects to the database at `location`, brings its schema up to date (under an advisory lock:
    /// instances starting together migrate once) and runs `body` with the store; the connections
    /// close when it returns.
    /// `existing`: a schema nohit has not made is refused (a command that only reads), not
    /// created. `deadline`: how long a statement may go unanswered before its connection is taken
    /// for cut off (``HeldConnection``).
    package static func withStore<Result: Sendable>(
        _ location: Location, secrets: SecretBox, instance: String = PostgresStore.newInstanceID(),
        leaseSeconds: Double = 20, existing: Bool = false, deadline: Duration = PostgresStore.statementDeadline,
        logger: Logger = Logger(label: "nohit.postgres"), _ body: @Sendable (PostgresStore) async throws -> Result
    ) async throws -> Result {
        var configuration = PostgresClient.Configuration(
            host: location.host, port: location.port, username: location.username, password: location.password,
            database: location.database, tls: try Self.tls(location.tls))
        configuration.options.maximumConnections = 32
        configuration.options.connectTimeout = .seconds(10)
        configuration.options.additionalStartupParameters = [
            ("search_path", location.schema), ("application_name", "nohit \(instance)"),
            // A statement stuck behind a lock fails instead of hanging the service.
            ("lock_timeout", "30s"),
            // The server ends a session whose client it cannot reach (a link severed: no reset, no
            // error, packets stop) within about 30 s, probing an idle one and giving up on data
            // unacknowledged, so its transaction's locks do not hold the other instances until the
            // link returns. A live client is answered for by its kernel, but one that reads nothing
            // for 30 s while the server has more to send (stopped, its buffer full) is ended too.
            // PostgreSQL 12 or later (`tcp_user_timeout`); a pooler in between must pass them.
            ("tcp_keepalives_idle", "10"), ("tcp_keepalives_interval", "5"), ("tcp_keepalives_count", "3"),
            ("tcp_user_timeout", "30000"),
        ]
        let client = PostgresClient(configuration: configuration, backgroundLogger: QuietEarlyLease.wrapping(logger))
        let store = PostgresStore(
            client: client, location: location, secrets: secrets, instanceID: instance, leaseSeconds: leaseSeconds,
            deadline: deadline, logger: logger)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            // The pool serves leases once `run()` has begun; a query asked before waits for it
            // (the pool's warning that it did is dropped: ``QuietEarlyLease``).
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            do {
                try await store.migrate(existing: existing)
            } catch let error as StoreError {
                throw error
            } catch {
                throw StoreError.configuration("cannot open the database \(location): \(Self.describe(error))")
            }
            return try await body(store)
        }
    }

    /// `withStore` with the secrets key read from `secretsKeyFile`. A missing file is created
    /// (0600) only when the database holds no secret sealed with a key: a new key could not open
    /// them.
    package static func withStore<Result: Sendable>(
        _ location: Location, secretsKeyFile: String, instance: String = PostgresStore.newInstanceID(),
        leaseSeconds: Double = 20, existing: Bool = false, logger: Logger = Logger(label: "nohit.postgres"),
        _ body: @Sendable (PostgresStore) async throws -> Result
    ) async throws -> Result {
        let key = try SecretBox.existingKeyFile(at: secretsKeyFile)
        // Seals nothing until the check below: opening seals no stored secret.
        let provisional = key ?? SecretBox.ephemeral()
        return try await withStore(
            location, secrets: provisional, instance: instance, leaseSeconds: leaseSeconds, existing: existing,
            logger: logger
        ) { store in
            guard key == nil else { return try await body(store) }
            let sealed = try await store.sealedSecretCount()
            guard sealed == 0 else {
                throw SecretBox.missingKey(secretsKeyFile, sealed: sealed, database: "\(location)")
            }
            let key = try SecretBox.newKeyFile(at: secretsKeyFile)
            return try await body(store.with(secrets: key))
        }
    }

    static func tls(_ mode: String) throws -> PostgresClient.Configuration.TLS {
        switch mode {
        case "prefer": .prefer(.makeClientConfiguration())
        case "require": .require(.makeClientConfiguration())
        default: .disable
        }
    }

    /// A name for this process among the instances: host, process id and a random part.
    package static func newInstanceID() -> String {
        let host = ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? "host"
        return "\(host)-\(ProcessInfo.processInfo.processIdentifier)-\(UUID().uuidString.prefix(8).lowercased())"
    }

    // MARK: Running statements

    /// Runs `body` in a transaction on one connection: committed when it returns, rolled back when it
    /// throws (the error it threw comes out as it is).
    ///
    /// A transaction PostgreSQL chose to abort in a deadlock, or as a serialization failure, is run
    /// again (up to three times): instances' transactions touch the same rows in different orders
    /// now and then, and the right answer to that is to try again.
    func transaction<Result>(
        _ body: (HeldConnection) async throws -> sending Result
    ) async throws -> sending Result {
        let logger = logger
        var attempt = 1
        while true {
            do {
                return try await client.withConnection { connection in
                    try await connection.query("BEGIN", logger: logger)
                    let result: Result
                    do {
                        result = try await body(connection)
                    } catch {
                        _ = try? await connection.query("ROLLBACK", logger: logger)
                        throw error
                    }
                    try await connection.query("COMMIT", logger: logger)
                    return result
                }
            } catch  where attempt < 3 && Self.isRetryable(error) {
                logger.debug("transaction aborted; running it again", metadata: ["error": "\(Self.describe(error))"])
                attempt += 1
            }
        }
    }

    /// A deadlock or a serialization failure: the transaction can run again.
    static func isRetryable(_ error: any Error) -> Bool {
        ["40P01", "40001"].contains((error as? PSQLError)?.serverInfo?[.sqlState] ?? "")
    }

    /// Runs a statement on any connection and drops its rows.
    func execute(_ query: PostgresQuery) async throws {
        _ = try await client.query(query, logger: logger).collect()
    }

    /// Whether `error` is PostgreSQL refusing a duplicate key.
    static func isUniqueViolation(_ error: any Error) -> Bool {
        (error as? PSQLError)?.serverInfo?[.sqlState] == "23505"
    }

    /// The server's message for a PostgreSQL error, or the error.
    package static func describe(_ error: any Error) -> String {
        if let error = error as? PSQLError {
            if let message = error.serverInfo?[.message] {
                return message + (error.serverInfo?[.sqlState].map { " (SQLSTATE \($0))" } ?? "")
            }
            return "\(error.code)" + (error.underlying.map { ": \($0)" } ?? "")
        }
        return "\(error)"
    }
}

/// The pool's background logger without one warning: that a connection was asked for before the
/// pool's `run()` began. Such a request waits for it (the pool's design; `withStore` starts `run()`
/// first, but cannot know when it has begun, and under load a query came first), so the warning
/// tells an operator nothing they can act on, and under load it came first in a command's output
/// (`nohit analytics export`). Every other line passes as it is.
struct QuietEarlyLease: ForwardingLogHandler {
    var inner: any LogHandler

    func log(event: LogEvent) {
        if event.level == .warning,
            event.message.description.hasPrefix("Trying to lease connection from `PostgresClient`, but")
        {
            return
        }
        inner.log(event: event)
    }

    /// `logger` with its handler wrapped.
    static func wrapping(_ logger: Logger) -> Logger {
        var wrapped = logger
        wrapped.handler = QuietEarlyLease(inner: logger.handler)
        return wrapped
    }
}
