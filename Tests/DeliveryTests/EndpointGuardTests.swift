import Alerts
import Clocks
import Delivery
import Foundation
import NIOCore
import Testing

/// What a URL's host means (as the system resolver reads it) and which addresses a delivery may
/// connect to: checked when connecting, after DNS, whatever the host's spelling.
@Suite struct EndpointGuardTests {
    @Test(arguments: [
        ("127.0.0.1", "127.0.0.1", true), ("127.1", "127.0.0.1", false), ("0177.0.0.1", "127.0.0.1", false),
        ("0x7f.0.0.1", "127.0.0.1", false), ("0x7F.0.0.1", "127.0.0.1", false), ("012.0.0.1", "10.0.0.1", false),
        ("0251.0376.0251.0376", "169.254.169.254", false), ("169.254.43518", "169.254.169.254", false),
        ("2130706433", "127.0.0.1", false), ("0x7f000001", "127.0.0.1", false), ("10.1.65535", "10.1.255.255", false),
        ("8.8.8.8.", "8.8.8.8", true), ("0", "0.0.0.0", false),
    ])
    func numericHostsAreReadAsTheResolverReadsThem(host: String, address: String, canonical: Bool) {
        guard case .ipv4(let read, let isCanonical) = IPAddress.read(host: host) else {
            Issue.record("\(host) is not read as IPv4: \(IPAddress.read(host: host))")
            return
        }
        #expect(read.description == address)
        #expect(isCanonical == canonical)
    }

    @Test(arguments: ["256.1.1.1", "1.2.3.4.5", "08.1.1.1", "1.2.3.0x", "example.123", "1..2.3", "4294967296"])
    func numericLookingHostsThatAreNoAddressAreInvalid(host: String) {
        guard case .invalid = IPAddress.read(host: host) else {
            Issue.record("\(host): \(IPAddress.read(host: host))")
            return
        }
    }

    @Test(arguments: [
        ("::1", "loopback"), ("::", "unspecified"), ("::ffff:127.0.0.1", "loopback"), ("::ffff:10.0.0.1", "private"),
        ("::127.0.0.1", "IPv4-compatible"), ("64:ff9b::7f00:1", "NAT64"), ("64:ff9b::a9fe:a9fe", "link-local"),
        ("64:ff9b:1::1", "local-use NAT64"), ("fd00::1", "unique local"), ("fe80::1", "link-local"),
        ("2002:c0a8:101::1", "6to4"), ("2001:db8::1", "documentation"), ("ff02::1", "multicast"),
        ("100::1", "discard"), ("2001::1", "Teredo"),
    ])
    func internalIPv6RangesAreNamed(host: String, range: String) throws {
        guard case .ipv6(let address) = IPAddress.read(host: host) else {
            Issue.record("\(host) is not IPv6")
            return
        }
        let name = try #require(address.internalRange, "\(host) is not internal")
        #expect(name.contains(range), "\(host): \(name)")
    }

    @Test(arguments: [
        "8.8.8.8", "1.1.1.1", "172.32.0.1", "100.128.0.1", "192.169.0.1", "2606:4700::1111", "64:ff9b::808:808",
    ])
    func publicAddressesAreNotInternal(host: String) {
        switch IPAddress.read(host: host) {
        case .ipv4(let address, _), .ipv6(let address): #expect(address.internalRange == nil, "\(host)")
        default: Issue.record("\(host) is not an address")
        }
    }

    /// A name is judged by every address it resolves to, when a delivery connects.
    @Test func aNameIsJudgedByWhatItResolvesTo() async throws {
        let resolver = StaticHostResolver([
            "rebound.example": ["127.0.0.1"], "metadata.example": ["169.254.169.254"],
            "mixed.example": ["10.0.0.7", "93.184.215.14"], "nat64.example": ["64:ff9b::7f00:1"],
            "public.example": ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"],
        ])
        let checked = EndpointGuard(resolver: resolver)
        for host in ["rebound.example", "metadata.example", "nat64.example", "127.1", "0x7f.0.0.1"] {
            do {
                let addresses = try await checked.addresses(host: host, port: 443)
                Issue.record("\(host) was allowed: \(addresses)")
            } catch {
                #expect(error.isInternal, "\(host)")
                #expect(error.reason.contains("the operator has not allowed private networks"))
            }
        }
        // Only the public address of a name with both.
        let mixed = try await checked.addresses(host: "mixed.example", port: 443)
        #expect(mixed.map { $0.ipAddress } == ["93.184.215.14"])
        #expect(try await checked.addresses(host: "public.example", port: 443).count == 2)
        // A name nobody knows is not resolvable, which may change: not judged internal.
        await #expect(throws: EndpointRefusal.self) { try await checked.addresses(host: "unknown.example", port: 443) }
        // The operator may allow private networks, or trust one endpoint (the demo's fake).
        let open = EndpointGuard(resolver: resolver, allowPrivateNetworks: true)
        #expect(try await open.addresses(host: "rebound.example", port: 443).map(\.ipAddress) == ["127.0.0.1"])
        var trusting = EndpointGuard(resolver: resolver)
        trusting.trusted = [EndpointGuard.Endpoint(host: "rebound.example", port: 8443)]
        #expect(try await trusting.addresses(host: "rebound.example", port: 8443).count == 1)
        await #expect(throws: EndpointRefusal.self) { try await trusting.addresses(host: "rebound.example", port: 443) }
    }

    /// End to end: a webhook and a push subscription on a public-looking name that resolves to
    /// loopback. The listener there receives nothing, over HTTP/1.1 or HTTP/2, and the device is
    /// pruned (its endpoint is refused, not retried).
    @Test func aLoopbackListenerBehindAPublicNameReceivesNothing() async throws {
        let listener = try await LoopbackListener.start()
        let resolver = StaticHostResolver(["hooks.nohit.test": ["127.0.0.1"], "push.nohit.test": ["::1", "127.0.0.1"]])
        var http1 = HTTP1Client.Configuration()
        http1.endpointGuard = EndpointGuard(resolver: resolver)
        let endpoints = try HTTP1Client(configuration: http1)
        let webhook = WebhookChannel(client: endpoints, clock: SystemWallClock())
        let hook = ChannelIntegrationTests.delivery(token: "") { _ in
            .webhook(url: "https://hooks.nohit.test:\(listener.port)/internal", secret: StandardWebhooks.newSecret())
        }
        let hookOutcome = await webhook.deliver(hook)
        guard case .gone(let reason, _) = hookOutcome else {
            Issue.record("webhook: \(hookOutcome)")
            return
        }
        #expect(reason.contains("resolves only to internal addresses: 127.0.0.1 (loopback"))

        var http2 = HTTP2Client.Configuration()
        http2.endpointGuard = EndpointGuard(resolver: resolver)
        let origins = WebPushOrigins(configuration: http2)
        let vapid = VAPID(key: .init(), subject: "mailto:ops@example.org")
        let subscriber = try RegistrarTests.rfcSubscriber()
        for channel in [
            WebPushChannel(client: endpoints, vapid: vapid, clock: SystemWallClock(), origins: origins),
            WebPushChannel(client: endpoints, vapid: vapid, clock: SystemWallClock()),
        ] {
            let push = ChannelIntegrationTests.delivery(token: "") { _ in
                .webPush(
                    endpoint: "https://push.nohit.test:\(listener.port)/push/1", p256dh: subscriber.p256dh,
                    auth: subscriber.auth)
            }
            let outcome = await channel.deliver(push)
            guard case .gone(let reason, _) = outcome else {
                Issue.record("web push: \(outcome)")
                continue
            }
            #expect(reason.contains("loopback"))
        }
        await origins.shutdown()
        #expect(listener.connections == 0)
        #expect(listener.bytes == 0)
        try await listener.close()
    }
}
