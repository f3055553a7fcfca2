import Logging
import NIOCore
import PostgresNIO
import Synchronization

/// A connection of the pool held for a run of statements (a transaction): each statement fails as
/// the database unreachable when the connection has closed, instead of waiting for ever.
///
/// PostgresNIO 1.33 writes a statement to its channel with no promise, and a closed channel drops
/// the write: a statement sent on a connection the server closed (PostgreSQL restarted, the backend
/// ended, the session timed out) is never answered. A transaction whose connection closed under it
/// would wait at its next statement, or at the ROLLBACK after its error, or at its COMMIT, for
/// good: seen as three replay instances that never went on after PostgreSQL came back. A statement
/// already on its way when the connection closes is failed by the library; one whose write was
/// dropped is failed here, once the connection has been seen closed at two checks (a quarter of a
/// second apart, from half a second after the statement was sent).
///
/// A link cut silently (packets dropped, no reset) leaves a statement whose answer was lost waiting
/// on a connection that never closes: the server gives the session up (its keepalives, set by the
/// store), but the client's socket, with nothing to send, never learns it. Seen as a replay
/// instance that never ended after its link to PostgreSQL came back. A statement unanswered for
/// its `deadline` closes its connection and fails as the database unreachable.
struct HeldConnection: Sendable {
    let connection: PostgresConnection
    /// How long a statement (with its rows, where they are read here) may go unanswered before its
    /// connection is taken for cut off; nil: as long as it takes (a migration waiting its turn).
    var deadline: Duration?
    /// How long a statement may wait once its connection is closed: the library fails one it had
    /// sent at once, so only a dropped one waits this long.
    static let grace = TimeAmount.milliseconds(500)
    static let check = TimeAmount.milliseconds(250)

    init(_ connection: PostgresConnection, deadline: Duration?) {
        self.connection = connection
        self.deadline = deadline
    }

    /// `checkingFirst`: refused at once on a connection seen closed (false only in a test of the
    /// race below: a statement whose write the library dropped).
    @discardableResult
    func query(
        _ query: PostgresQuery, logger: Logger, checkingFirst: Bool = true, file: String = #fileID,
        line: Int = #line
    ) async throws -> PostgresRowSequence {
        let connection = connection
        guard !checkingFirst || !connection.isClosed else { throw Self.closed }
        return try await guarded { try await connection.query(query, logger: logger, file: file, line: line) }
    }

    /// A statement answered whole: its rows are read under the same watch as the statement.
    func answered(_ query: PostgresQuery, logger: Logger, file: String = #fileID, line: Int = #line)
        async throws -> AnsweredRows
    {
        let connection = connection
        guard !connection.isClosed else { throw Self.closed }
        return try await guarded {
            AnsweredRows(rows: try await connection.query(query, logger: logger, file: file, line: line).collect())
        }
    }

    /// `work`'s result, or a failure once the connection has been seen closed twice, or once
    /// `deadline` has passed (the connection is closed then).
    private func guarded<Value: Sendable>(_ work: @escaping @Sendable () async throws -> Value) async throws -> Value {
        let connection = connection
        let answer = Answer<Value>()
        let limit = deadline.map { deadline in
            let (seconds, attoseconds) = deadline.components
            return NIODeadline.now() + .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        }
        let deadline = deadline
        return try await withCheckedThrowingContinuation { continuation in
            answer.waiting.withLock { $0 = continuation }
            // Checked every half grace, failed once seen closed twice (a grace after its close).
            answer.watch.withLock {
                $0 = connection.eventLoop.scheduleRepeatedTask(initialDelay: Self.grace, delay: Self.check) {
                    task in
                    if let limit, let deadline, NIODeadline.now() >= limit {
                        task.cancel()
                        answer.give(.failure(Self.unanswered(deadline)))
                        // Whatever else waits on it fails too, and the pool opens another.
                        connection.close().whenComplete { _ in }
                        return
                    }
                    guard connection.isClosed else { return }
                    if answer.seenClosed.add(1, ordering: .relaxed).newValue >= 2 {
                        task.cancel()
                        answer.give(.failure(Self.closed))
                    }
                }
            }
            Task {
                let result: Result<Value, any Error>
                do {
                    result = .success(try await work())
                } catch {
                    result = .failure(error)
                }
                answer.give(result)
            }
        }
    }

    static var closed: StorageFault {
        StorageFault(.unreachable, detail: "the connection to PostgreSQL closed")
    }

    static func unanswered(_ deadline: Duration) -> StorageFault {
        StorageFault(
            .unreachable,
            detail: "PostgreSQL did not answer a statement within \(deadline) (the link to it may be cut off); "
                + "its connection is closed")
    }

    /// The statement's answer or its connection's close, whichever comes first.
    private final class Answer<Value: Sendable>: Sendable {
        let waiting = Mutex<CheckedContinuation<Value, any Error>?>(nil)
        let watch = Mutex<RepeatedTask?>(nil)
        let seenClosed = Atomic(0)

        func give(_ result: Result<Value, any Error>) {
            guard let continuation = waiting.withLock({ $0.take() }) else { return }
            watch.withLock { $0?.cancel() }
            continuation.resume(with: result)
        }
    }
}

/// The store's connection pool, lending ``HeldConnection``s: every statement the store sends fails
/// as the database unreachable once its connection has closed (see there). A single statement
/// (`query`) is answered whole: its rows are read on the connection it was lent, before the
/// connection goes back. The analytics reads are a page at a time; the largest others are a list
/// of devices (a fan-out's followers, the active devices), held twice for a moment (the rows,
/// then what they decode to).
///
/// Each statement costs a task and a timer on the connection's event loop beside the statement
/// itself; a statement whose write was dropped leaves its task waiting for good (with the
/// statement's binds), once per such drop.
struct GuardedPool: Sendable {
    let pool: PostgresClient
    /// How long a statement may go unanswered (``HeldConnection``).
    let deadline: Duration

    func withConnection<Result>(
        _ body: (HeldConnection) async throws -> sending Result
    ) async throws -> sending Result {
        let deadline = deadline
        return try await pool.withConnection { try await body(HeldConnection($0, deadline: deadline)) }
    }

    @discardableResult
    func query(
        _ query: PostgresQuery, logger: Logger, file: String = #fileID, line: Int = #line
    ) async throws -> AnsweredRows {
        let deadline = deadline
        return try await pool.withConnection { connection in
            try await HeldConnection(connection, deadline: deadline).answered(
                query, logger: logger, file: file, line: line)
        }
    }
}

/// A statement's rows, read whole: iterated and decoded as PostgresNIO's row sequence is.
struct AnsweredRows: AsyncSequence, Sendable {
    typealias Element = PostgresRow
    let rows: [PostgresRow]

    func collect() -> [PostgresRow] { rows }

    func makeAsyncIterator() -> Iterator { Iterator(rows: rows.makeIterator()) }

    struct Iterator: AsyncIteratorProtocol {
        var rows: IndexingIterator<[PostgresRow]>
        mutating func next() async throws -> PostgresRow? { rows.next() }
    }
}
