import ServiceLifecycle
import Synchronization

/// The groups a server's connections run in: each connection is handed to one of `count` task
/// groups in turn, instead of all of them being children of the server's one group.
///
/// The Swift runtime keeps a task group's children in a singly linked list: adding a child walks
/// to the list's end, and removing one walks from its head to the child. With every connection a
/// child of Hummingbird's one group, each connection opened and each one closed walked over every
/// open connection: at 10,000 open connections (the live stream's clients, idlers) and a client
/// that opens and closes connections fast, those walks took a quarter of the server's CPU in the
/// hostile benchmark. Here a list holds about one connection in `count`.
///
/// A service that runs inside the application's service group, before the server in its list,
/// so stopped after it: the server stops taking connections, then the graceful stop reaches the
/// connections running here (their requests end, the live streams close) and this service
/// returns when the last one has ended.
package final class ConnectionShards: Service, Sendable {
    typealias Work = @Sendable () async -> Void

    private let shards: [(stream: AsyncStream<Work>, continuation: AsyncStream<Work>.Continuation)]
    private let turn = Atomic<UInt>(0)

    package init(count: Int = 512) {
        precondition(count > 0, "at least one shard")
        shards = (0..<count).map { _ in AsyncStream<Work>.makeStream() }
    }

    /// Has `work` (one connection's life) run in the next shard's group, and returns at once; runs
    /// it here, to its end, when the shards have stopped.
    func run(_ work: @escaping Work) async {
        let index = Int(turn.wrappingAdd(1, ordering: .relaxed).oldValue % UInt(shards.count))
        switch shards[index].continuation.yield(work) {
        case .enqueued: return
        case .dropped, .terminated: await work()
        @unknown default: await work()
        }
    }

    package func run() async throws {
        await withGracefulShutdownHandler {
            await withDiscardingTaskGroup { group in
                for shard in shards {
                    group.addTask {
                        await withDiscardingTaskGroup { connections in
                            for await work in shard.stream {
                                connections.addTask { await work() }
                            }
                        }
                    }
                }
            }
        } onGracefulShutdown: { [shards] in
            // The server has stopped taking connections: the ones handed over are run, and each
            // shard ends with its last connection.
            for shard in shards { shard.continuation.finish() }
        }
    }
}
