import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOPosix

extension APIServer {
    /// `responder`, answering each request in a child task of the connection's task. A task keeps
    /// the memory its deepest frames took until it ends (the runtime's task allocator keeps its
    /// slabs for reuse), and a request's frames (the middlewares, the router, the handler) are
    /// the deepest an HTTP/1.1 connection's task reaches: kept by every idle keep-alive
    /// connection, about 11 KB each, where a child task's are freed when the answer is written.
    /// (HTTP/2 answers each stream in a task of its own already.) The child starts at once on this
    /// thread, not through the executor's queue (where, on a busy machine, each hop waits).
    static func inChildTask(_ responder: @escaping HTTPChannelHandler.Responder) -> HTTPChannelHandler.Responder {
        { request, writer, channel in
            let handedOver = HandedOver(writer)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addImmediateTask { try await responder(request, handedOver.take(), channel) }
                try await group.waitForAll()
            }
        }
    }

    /// A response writer handed to the child task that answers (taken once, there).
    private final class HandedOver: @unchecked Sendable {
        private var writer: ResponseWriter?

        init(_ writer: consuming ResponseWriter) { self.writer = .some(writer) }

        func take() -> ResponseWriter {
            guard let writer = writer.take() else { preconditionFailure("a response writer is taken once") }
            return writer
        }
    }
}

/// The service's HTTP application, as the service runs it and the tests drive it: `api`'s routes
/// behind its guarded channel, on `configuration`'s address, on `eventLoopGroup` (NIO's shared one
/// when nil). Its connections run in `ConnectionShards`, a service of the application's own that
/// stops after the server.
package func buildHTTPApplication(
    _ api: APIServer, configuration: ApplicationConfiguration = ApplicationConfiguration(),
    eventLoopGroup: MultiThreadedEventLoopGroup? = nil,
    onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }, logger: Logger? = nil
) -> some ApplicationProtocol {
    let shards = ConnectionShards()
    return Application(
        responder: OwnTaskResponder(base: api.router().buildResponder()), server: api.server(shards: shards),
        configuration: configuration, services: [shards], onServerRunning: onServerRunning,
        eventLoopGroupProvider: eventLoopGroup.map { .shared($0) } ?? .singleton, logger: logger)
}

/// `base`, each request routed and handled (the middlewares, the router, the handler) in a task
/// of its own that ends with the response's head: the memory its frames took is freed before the
/// body is written, and a live stream's body, written for hours, is written from a shallow task
/// (5,000 never-reading streams: +168 MB, were +196 MB). Started at once on this thread.
struct OwnTaskResponder<Base: HTTPResponder>: HTTPResponder where Base.Context: Sendable {
    typealias Context = Base.Context

    let base: Base

    func respond(to request: Request, context: Context) async throws -> Response {
        try await withThrowingTaskGroup(of: Response.self) { group in
            group.addImmediateTask { try await base.respond(to: request, context: context) }
            guard let response = try await group.next() else { preconditionFailure("the one task answers") }
            return response
        }
    }
}
