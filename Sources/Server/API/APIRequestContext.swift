import Hummingbird
import NIOCore

/// The API's request context: Hummingbird's, plus the client, for the limits that count per
/// client (registrations, Keen's writes, query turns, live streams), and its connection.
package struct APIRequestContext: RequestContext, RemoteAddressRequestContext {
    package var coreContext: CoreRequestContextStorage
    /// The peer. Nil in tests through the router alone.
    package let remoteAddress: SocketAddress?
    /// The client behind a trusted proxy, as it forwarded it (``ClientAddressMiddleware``).
    package var forwardedClient: String?
    /// The client the request counts against (``ConnectionGate/clientKey(_:)``'s form): the
    /// forwarded one, or the peer. Worked out where a limit asks, not for every request.
    package var client: String { forwardedClient ?? ConnectionGate.clientKey(remoteAddress) }
    /// The connection (the live stream's stall watch closes it).
    package let channel: any Channel

    package init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
        channel = source.channel
    }
}

/// Reads the client a request comes from behind a trusted proxy (``TrustedProxies``) into the
/// context, and names it in the request's log lines; from any other peer nothing changes.
struct ClientAddressMiddleware: RouterMiddleware {
    let proxies: TrustedProxies

    func handle(
        _ request: Request, context: APIRequestContext,
        next: (Request, APIRequestContext) async throws -> Response
    ) async throws -> Response {
        guard proxies.trusts(context.remoteAddress) else { return try await next(request, context) }
        var context = context
        let client = proxies.client(peer: context.remoteAddress, headers: request.headers)
        context.forwardedClient = client
        context.logger[metadataKey: "client"] = "\(client)"
        return try await next(request, context)
    }
}
