import Hummingbird
import NIOCore

/// The API's request context: Hummingbird's, plus the client, for the limits that count per
/// client (registrations, Keen's writes, query turns, live streams), and its connection.
package struct APIRequestContext: RequestContext, RemoteAddressRequestContext {
    package var coreContext: CoreRequestContextStorage
    /// The peer. Nil in tests through the router alone.
    package let remoteAddress: SocketAddress?
    /// The client the request counts against (``ConnectionGate/clientKey(_:)``'s form): the
    /// peer, or behind a trusted proxy the address it forwarded (``ClientAddressMiddleware``).
    package var client: String
    /// The connection (the live stream's stall watch closes it).
    package let channel: any Channel

    package init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
        client = ConnectionGate.clientKey(remoteAddress)
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
        context.client = proxies.client(peer: context.remoteAddress, headers: request.headers)
        context.logger[metadataKey: "client"] = "\(context.client)"
        return try await next(request, context)
    }
}
