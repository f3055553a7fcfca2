import Hummingbird
import NIOCore

/// The API's request context: Hummingbird's, plus the address of the client, for the limits that
/// count per client (registrations), and its connection.
package struct APIRequestContext: RequestContext, RemoteAddressRequestContext {
    package var coreContext: CoreRequestContextStorage
    /// Nil in tests through the router alone.
    package let remoteAddress: SocketAddress?
    /// The connection (the live stream's stall watch closes it).
    package let channel: any Channel

    package init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
        channel = source.channel
    }
}
