import Hummingbird
import NIOCore

/// The API's request context: Hummingbird's, plus the address of the client, for the limits that
/// count per client (registrations).
package struct APIRequestContext: RequestContext, RemoteAddressRequestContext {
    package var coreContext: CoreRequestContextStorage
    /// Nil in tests through the router alone.
    package let remoteAddress: SocketAddress?

    package init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }
}
