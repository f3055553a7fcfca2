import Alerts
import AsyncHTTPClient
import Clocks
import Crypto
import Delivery
import FakeProviders
import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import Synchronization
import Testing

/// The real channels, over TLS and HTTP/2, against `nohit fake-apns` running in process.
@Suite(.serialized) struct ChannelIntegrationTests {
    /// A fake provider and clients that trust it.
    struct Harness {
        let server: FakeProviderServer
        let client: HTTPClient
        /// Webhooks and HTTP/1.1 pushes: the fake listens on loopback, which these tests allow.
        let endpoints: HTTP1Client
        let key = P256.Signing.PrivateKey()
        let token: APNsProviderToken

        init(timeout: Int64 = 10, offersHTTP2: Bool = true, redirectLocation: String? = nil) async throws {
            var configuration = FakeProviderConfiguration(
                verificationKey: key.publicKey, keyID: "KEY123", teamID: "TEAM45")
            configuration.failuresBeforeSuccess = 1
            configuration.offersHTTP2 = offersHTTP2
            if let redirectLocation { configuration.redirectLocation = redirectLocation }
            server = try await FakeProviderServer.start(configuration: configuration)
            client = try Self.client(trusting: server.authority.caCertificatePEM)
            var http1 = HTTP1Client.Configuration()
            http1.extraCertificateAuthorities = [server.authority.caCertificatePEM]
            http1.endpointGuard = Self.loopbackAllowed
            endpoints = try HTTP1Client(configuration: http1)
            token = APNsProviderToken(key: key, keyID: "KEY123", teamID: "TEAM45", clock: SystemWallClock())
        }

        /// The guard these tests connect through: loopback allowed (the fake is there), and names
        /// resolved by a table, never on the network.
        static let loopbackAllowed = EndpointGuard(resolver: StaticHostResolver([:]), allowPrivateNetworks: true)

        static func client(trusting pem: String) throws -> HTTPClient {
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMBytes(Array(pem.utf8)))
            var configuration = HTTPClient.Configuration(tlsConfiguration: tls)
            configuration.httpVersion = .automatic
            return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        }

        let transports = Transports()

        /// A request's deadline unless a test's is its point: a bound for a provider that never
        /// answers (a starved run can be a minute late), not a measure of speed.
        static let requestTimeout = TimeAmount.seconds(120)

        func apns(transport: APNsTransportKind, timeout: TimeAmount = Harness.requestTimeout, kind: ChannelKind = .apns)
            throws -> APNsChannel
        {
            try apns(transport: transport, timeout: timeout, kind: kind, token: token)
        }

        func apns(
            transport: APNsTransportKind, timeout: TimeAmount = Harness.requestTimeout, kind: ChannelKind = .apns,
            token: APNsProviderToken
        )
            throws -> APNsChannel
        {
            let configuration = APNsConfiguration(
                productionURL: server.baseURL, sandboxURL: server.baseURL, timeout: timeout)
            switch transport {
            case .asyncHTTPClient:
                return APNsChannel(kind: kind, client: client, configuration: configuration, token: token)
            case .http2:
                var options = HTTP2Client.Configuration()
                options.extraCertificateAuthorities = [server.authority.caCertificatePEM]
                let lean = try HTTP2APNsTransport(configuration: configuration, client: options)
                transports.append(lean)
                return APNsChannel(kind: kind, transport: lean, token: token)
            }
        }

        /// A Web Push channel over `transport` (the lean client's origins are shut down with the harness).
        func webPush(
            transport: APNsTransportKind, clock: any WallClock = SystemWallClock()
        ) -> (channel: WebPushChannel, origins: WebPushOrigins?) {
            let vapid = VAPID(key: P256.Signing.PrivateKey(), subject: "mailto:ops@example.org")
            var origins: WebPushOrigins?
            if transport == .http2 {
                var options = HTTP2Client.Configuration()
                options.extraCertificateAuthorities = [server.authority.caCertificatePEM]
                options.endpointGuard = Self.loopbackAllowed
                origins = WebPushOrigins(configuration: options, clock: clock)
                transports.append(origins!)
            }
            // A long deadline: a batch of 150 on a machine running the whole suite beside (browser
            // tests included) passed the default 10 s per request with half of it in flight; what a
            // deadline does has its own tests.
            let channel = WebPushChannel(
                client: endpoints, vapid: vapid, clock: SystemWallClock(), timeout: .seconds(60), origins: origins)
            return (channel, origins)
        }

        /// A webhook channel that trusts the fake.
        func webhook() -> WebhookChannel {
            WebhookChannel(client: endpoints, clock: SystemWallClock())
        }

        func shutdown() async throws {
            for transport in transports.all { await transport.shutdown() }
            for origins in transports.allOrigins { await origins.shutdown() }
            try await client.shutdown()
            try await server.shutdown()
        }
    }

    /// Both ways APNs (and Web Push) requests can travel: every APNs test runs on each.
    enum APNsTransportKind: String, CaseIterable, Sendable {
        case asyncHTTPClient
        case http2
    }

    final class Transports: @unchecked Sendable {
        // Guarded by the lock.
        private let lock = NSLock()
        private var transports: [HTTP2APNsTransport] = []
        private var origins: [WebPushOrigins] = []
        func append(_ transport: HTTP2APNsTransport) { lock.withLock { transports.append(transport) } }
        func append(_ origins: WebPushOrigins) { lock.withLock { self.origins.append(origins) } }
        var all: [HTTP2APNsTransport] { lock.withLock { transports } }
        var allOrigins: [WebPushOrigins] { lock.withLock { origins } }
    }

    static let payload = Data(#"{"aps":{"alert":{"title":"No-hitter alert","body":"through 7"}}}"#.utf8)

    static func delivery(
        token: String, channel: ((String) -> DeviceChannel)? = nil, registered: Date = Date(), payload: Data = payload
    )
        -> OutboundDelivery
    {
        OutboundDelivery(
            id: UUID(), deviceID: UUID(),
            channel: channel?(token) ?? .apns(token: token, environment: .sandbox, topic: "com.example.nohit"),
            payload: payload, collapseKey: "CHA202008250-home", createdAt: Date(),
            expiresAt: Date().addingTimeInterval(1800))
    }

    /// Sends until the retry policy says stop, as the dispatcher does (without waiting).
    static func drive(
        _ delivery: OutboundDelivery, on channel: any DeliveryChannel,
        registeredAt: Date = Date().addingTimeInterval(-86_400)
    )
        async -> (outcomes: [ProviderOutcome], action: DeliveryAction)
    {
        var state = DeliveryRetryState(attempts: 0, createdAt: delivery.createdAt, registeredAt: registeredAt)
        var outcomes: [ProviderOutcome] = []
        while true {
            state.attempts += 1
            let outcome = await channel.deliver(delivery)
            outcomes.append(outcome)
            let action = state.next(after: outcome, policy: RetryPolicy(), now: Date(), random: 0.5)
            switch action {
            case .retry, .refreshTokenAndRetry:
                if action == .refreshTokenAndRetry { _ = await channel.refreshCredentials() }
                continue
            default:
                return (outcomes, action)
            }
        }
    }

    static func token(_ prefix: String) -> String {
        let hex = (UUID().uuidString + UUID().uuidString).lowercased().replacingOccurrences(of: "-", with: "")
        return prefix + String(hex.prefix(64 - prefix.count))
    }

    @Test(arguments: APNsTransportKind.allCases)
    func aBatchReportsEveryDeliveryOnceWithItsOwnOutcome(transport: APNsTransportKind) async throws {
        let harness = try await Harness()
        let channel = try harness.apns(transport: transport)
        let cases: [(token: String, environment: APNsEnvironment, expected: ProviderOutcome?)] = [
            (Self.token("ab"), .production, .accepted),
            (Self.token("400"), .sandbox, .gone(reason: "BadDeviceToken", since: nil)),
            (Self.token("403"), .production, .rejected(status: 403, reason: "Forbidden")),
            (Self.token("429"), .sandbox, .transient(reason: "429 TooManyRequests", retryAfter: 1)),
            (Self.token("cd"), .sandbox, .accepted),
            (Self.token("413"), .production, .rejected(status: 413, reason: "PayloadTooLarge")),
            (Self.token("ef"), .production, .accepted),
        ]
        var deliveries = cases.map { item in
            Self.delivery(token: item.token) {
                .apns(token: $0, environment: item.environment, topic: "com.example.nohit")
            }
        }
        // Not an APNs device: refused without a request, in the same batch.
        deliveries.append(Self.delivery(token: "") { _ in .webhook(url: "https://hooks.example.org/n", secret: "x") })
        let received = try await Self.sendBatch(deliveries, on: channel)
        #expect(received.map(\.0).sorted() == Array(deliveries.indices))
        let byIndex = Dictionary(received, uniquingKeysWith: { first, _ in first })
        for (index, item) in cases.enumerated() {
            #expect(byIndex[index] == item.expected, "delivery \(index) (\(item.token.prefix(3)))")
        }
        #expect(byIndex[cases.count] == .rejected(status: 0, reason: "not an APNs device"))
        let accepted = Set(harness.server.state.accepted.map(\.apnsID))
        #expect(accepted == Set([0, 4, 6].map { deliveries[$0].id.text() }))
        try await harness.shutdown()
    }

    @Test(arguments: APNsTransportKind.allCases)
    func acceptedAlertCarriesEveryHeader(transport: APNsTransportKind) async throws {
        let harness = try await Harness()
        let delivery = Self.delivery(token: Self.token("ab"))
        let result = await Self.drive(delivery, on: try harness.apns(transport: transport))
        #expect(result.outcomes == [.accepted])
        #expect(result.action == .markDelivered)
        let id = delivery.id.uuidString.lowercased()
        #expect(harness.server.state.accepted.map(\.apnsID) == [id])
        let notification = try #require(harness.server.state.notification(apnsID: id))
        #expect(notification.topic == "com.example.nohit")
        #expect(notification.pushType == "alert")
        #expect(notification.collapseID == "CHA202008250-home")
        #expect(notification.payload == Self.payload)
        try await harness.shutdown()
    }

    /// `GET /accepted` lists every accepted `apns-id` with its count; `GET /accepted/count` gives
    /// the same totals without the list (what the fan-out benchmark asks after 100,000 pushes).
    @Test func acceptedListingAndCountsAgree() async throws {
        let harness = try await Harness()
        let channel = try harness.apns(transport: .http2)
        let twice = Self.delivery(token: Self.token("ab"))
        let once = Self.delivery(token: Self.token("cd"))
        for delivery in [twice, once, twice] {
            #expect(await Self.drive(delivery, on: channel).action == .markDelivered)
        }
        func get(_ path: String) async throws -> [String: Any] {
            let response = try await harness.client.execute(
                HTTPClientRequest(url: harness.server.baseURL + path), timeout: .seconds(10))
            #expect(response.status == .ok, "\(path)")
            let body = try await response.body.collect(upTo: 1 << 20)
            return try #require(try JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any])
        }
        let listing = try await get("/accepted")
        let counts = try await get("/accepted/count")
        #expect(listing["unique"] as? Int == 2)
        #expect(listing["total"] as? Int == 3)
        #expect(counts["unique"] as? Int == 2)
        #expect(counts["total"] as? Int == 3)
        #expect(counts["accepted"] == nil)
        let entries = try #require(listing["accepted"] as? [[String: Any]])
        #expect(entries.map { $0["apns_id"] as? String } == [twice.id.text(), once.id.text()])
        #expect(entries.map { $0["count"] as? Int } == [2, 1])
        try await harness.shutdown()
    }

    @Test(arguments: APNsTransportKind.allCases)
    func liveActivityUpdateUsesItsTopicAndPushType(transport: APNsTransportKind) async throws {
        let harness = try await Harness()
        let delivery = Self.delivery(token: Self.token("cd")) {
            .liveActivity(token: $0, environment: .production, topic: "com.example.nohit")
        }
        let result = await Self.drive(delivery, on: try harness.apns(transport: transport, kind: .liveActivity))
        #expect(result.action == .markDelivered)
        let notification = try #require(harness.server.state.notification(apnsID: delivery.id.uuidString.lowercased()))
        #expect(notification.topic == "com.example.nohit.push-type.liveactivity")
        #expect(notification.pushType == "liveactivity")
        try await harness.shutdown()
    }

    @Test(arguments: [
        (
            "400", [ProviderOutcome.gone(reason: "BadDeviceToken", since: nil)],
            DeliveryAction.pruneDevice(reason: "BadDeviceToken")
        ),
        ("403", [.rejected(status: 403, reason: "Forbidden")], .fail(reason: "403 Forbidden")),
        ("413", [.rejected(status: 413, reason: "PayloadTooLarge")], .fail(reason: "413 PayloadTooLarge")),
    ])
    func permanentFailuresAreNotRetried(prefix: String, outcomes: [ProviderOutcome], action: DeliveryAction)
        async throws
    {
        for transport in APNsTransportKind.allCases {
            let harness = try await Harness()
            let result = await Self.drive(
                Self.delivery(token: Self.token(prefix)), on: try harness.apns(transport: transport))
            #expect(result.outcomes == outcomes, "\(transport)")
            #expect(result.action == action)
            #expect(harness.server.state.accepted.isEmpty)
            try await harness.shutdown()
        }
    }

    @Test(arguments: APNsTransportKind.allCases)
    func unregisteredIsPrunedOnlyIfRegisteredBeforeTheTimestamp(transport: APNsTransportKind) async throws {
        let harness = try await Harness()
        let pruned = await Self.drive(
            Self.delivery(token: Self.token("410a")), on: try harness.apns(transport: transport))
        #expect(pruned.action == .pruneDevice(reason: "Unregistered"))
        // The answer that decided (on a loaded machine a first attempt may stall and be retried).
        guard case .gone(_, let since?) = pruned.outcomes.last else {
            Issue.record("410 without a timestamp: \(pruned.outcomes)")
            try await harness.shutdown()
            return
        }
        #expect(abs(since.timeIntervalSinceNow) < 60)
        // The 410's timestamp (the epoch) predates the registration: the device stays.
        let kept = await Self.drive(
            Self.delivery(token: Self.token("4100")), on: try harness.apns(transport: transport))
        guard case .fail(let reason) = kept.action else {
            Issue.record("expected a failed delivery, got \(kept.action)")
            try await harness.shutdown()
            return
        }
        #expect(reason.contains("device kept"))
        try await harness.shutdown()
    }

    @Test(arguments: ["429", "500", "503"], APNsTransportKind.allCases)
    func transientFailuresAreRetriedAndDelivered(prefix: String, transport: APNsTransportKind) async throws {
        let harness = try await Harness()
        let delivery = Self.delivery(token: Self.token(prefix))
        let result = await Self.drive(delivery, on: try harness.apns(transport: transport))
        #expect(result.outcomes.count == 2)
        guard case .transient(_, let retryAfter) = result.outcomes[0] else {
            Issue.record("expected a transient failure first, got \(result.outcomes[0])")
            return
        }
        if prefix == "429" { #expect(retryAfter == 1) }
        #expect(result.outcomes[1] == .accepted)
        #expect(harness.server.state.accepted.map(\.count) == [1])
        try await harness.shutdown()
    }

    @Test(arguments: APNsTransportKind.allCases)
    func stallTripsTheDeadlineAndIsRetried(transport: APNsTransportKind) async throws {
        let harness = try await Harness()
        let delivery = Self.delivery(token: Self.token("57a11"))
        let started = ContinuousClock.now
        let result = await Self.drive(delivery, on: try harness.apns(transport: transport, timeout: .milliseconds(500)))
        guard case .transient(let reason, _) = result.outcomes.first else {
            Issue.record("expected a timeout, got \(result.outcomes)")
            try await harness.shutdown()
            return
        }
        #expect(reason.contains("timed out"))
        #expect(result.outcomes.last == .accepted)
        // The 500 ms deadline tripped, not the default (a loaded machine's full suite took 6.8 s
        // for the stall, the retry and the acceptance together; a starved one can be a minute late).
        #expect(ContinuousClock.now - started < .nanoseconds(Harness.requestTimeout.nanoseconds) - .seconds(10))
        try await harness.shutdown()
    }

    /// The lean client keeps one timer per connection, at the earliest deadline in flight: a
    /// request with a shorter timeout sent after a longer one still times out on its own deadline,
    /// the longer one on its, and answered requests are not touched.
    @Test func eachRequestTimesOutOnItsOwnDeadlineOnASharedConnection() async throws {
        let harness = try await Harness()
        var options = HTTP2Client.Configuration()
        options.extraCertificateAuthorities = [harness.server.authority.caCertificatePEM]
        let client = try HTTP2Client(origin: harness.server.baseURL, configuration: options)
        let bearer = try harness.token.current()
        func send(_ token: String, timeout: TimeAmount) async -> (Result<Int, HTTP2Client.Failure>, Duration) {
            let started = ContinuousClock.now
            let headers = [
                ("authorization", "bearer \(bearer)"), ("apns-topic", "com.example.nohit"),
                ("apns-id", UUID().text()),
            ]
            do {
                let response = try await client.execute(
                    path: "/3/device/\(token)", headers: headers, body: ByteBuffer(bytes: Self.payload),
                    timeout: timeout)
                return (.success(response.status), ContinuousClock.now - started)
            } catch {
                return (.failure(error), ContinuousClock.now - started)
            }
        }
        let before = harness.server.state.requestCount
        async let long = send(Self.token("57a11"), timeout: .milliseconds(2500))
        // The long one in flight (the fake has it) before the short one is sent.
        while harness.server.state.requestCount == before { try await Task.sleep(for: .milliseconds(5)) }
        async let short = send(Self.token("57a11"), timeout: .milliseconds(300))
        // Answered at once by the fake; its deadline (between the short one's and the long one's)
        // leaves a loaded machine time to answer (200 ms timed out in a run beside a release build).
        async let answered = send(Self.token("a"), timeout: .milliseconds(2000))
        let (shortResult, shortTime) = await short
        let (answeredResult, _) = await answered
        let (longResult, longTime) = await long
        #expect(shortResult == .failure(.timedOut))
        // Bounds that say whose deadline fired, not how busy the machine was: the short one did not
        // wait for the long one's deadline, the long one did not end at the short one's (and did
        // not hang).
        #expect(shortTime >= .milliseconds(300) && shortTime < .milliseconds(2500))
        #expect(answeredResult == .success(200))
        #expect(longResult == .failure(.timedOut))
        #expect(longTime >= .milliseconds(2500) && longTime < .seconds(10))
        #expect(harness.server.state.uniqueAcceptedCount == 1)
        await client.shutdown()
        try await harness.shutdown()
    }

    /// Far more bytes than HTTP/2's initial 65,535-byte connection window, on one connection: both
    /// sides must hand window back, or requests stall once it runs out.
    @Test(arguments: APNsTransportKind.allCases)
    func manyConcurrentRequestsOutlastTheFlowControlWindow(transport: APNsTransportKind) async throws {
        let harness = try await Harness()
        let channel = try harness.apns(transport: transport, timeout: .seconds(30))
        let count = 200
        // 200 requests of 3.5 KB: about 700 KB, 11 times the initial window.
        let body = String(repeating: "x", count: 3500)
        let largePayload = Data(#"{"aps":{"alert":{"title":"No-hitter alert","body":"\#(body)"}}}"#.utf8)
        let outcomes = await withTaskGroup(of: ProviderOutcome.self) { group in
            for index in 0..<count {
                group.addTask {
                    await channel.deliver(
                        Self.delivery(token: Self.token(String(format: "a%05x", index)), payload: largePayload))
                }
            }
            return await group.reduce(into: [ProviderOutcome]()) { $0.append($1) }
        }
        #expect(outcomes.count == count)
        // What came back instead, counted by kind, so a failure says why.
        let others = Dictionary(grouping: outcomes.filter { $0 != .accepted }, by: { "\($0)" }).mapValues(\.count)
        let accepted = harness.server.state.uniqueAcceptedCount
        // AsyncHTTPClient's HTTP/2 connection, under a loaded machine's full test run, has stalled
        // here twice after the first 64 KB (18 of 200 accepted, the rest past their 30-s deadline):
        // a known, intermittent fault of the optional transport (docs/configuration.md), checked
        // the same and recorded as known. The default transport must never stall: its failures
        // are failures.
        withKnownIssue(
            "AsyncHTTPClient's HTTP/2 requests can stall once the connection window runs out, under load",
            isIntermittent: true
        ) {
            #expect(
                others.isEmpty, "\(transport): \(count - others.values.reduce(0, +)) accepted, the others: \(others)")
            #expect(accepted == count)
        } when: {
            transport == .asyncHTTPClient
        }
        try await harness.shutdown()
    }

    @Test(arguments: APNsTransportKind.allCases)
    func goAwayIsResentOnANewConnection(transport: APNsTransportKind) async throws {
        let harness = try await Harness()
        let delivery = Self.delivery(token: Self.token("60a"))
        let result = await Self.drive(delivery, on: try harness.apns(transport: transport))
        guard case .connectionLost = result.outcomes.first else {
            Issue.record("expected the connection to go away, got \(result.outcomes)")
            try await harness.shutdown()
            return
        }
        #expect(result.outcomes.last == .accepted)
        #expect(harness.server.state.accepted.map(\.count) == [1])
        try await harness.shutdown()
    }

    @Test(arguments: APNsTransportKind.allCases)
    func expiredProviderTokenIsRefreshedOnce(transport: APNsTransportKind) async throws {
        let harness = try await Harness()
        let result = await Self.drive(
            Self.delivery(token: Self.token("e0")), on: try harness.apns(transport: transport))
        #expect(result.outcomes == [.expiredProviderToken, .accepted])
        #expect(harness.token.generated == 2)
        // Later requests use the new token without another refresh.
        _ = await Self.drive(Self.delivery(token: Self.token("ab")), on: try harness.apns(transport: transport))
        #expect(harness.token.generated == 2)
        try await harness.shutdown()
    }

    @Test(arguments: APNsTransportKind.allCases)
    func aTokenSignedWithAnotherKeyIsRejected(transport: APNsTransportKind) async throws {
        let harness = try await Harness()
        let stranger = APNsProviderToken(
            key: P256.Signing.PrivateKey(), keyID: "KEY123", teamID: "TEAM45", clock: SystemWallClock())
        let channel = try harness.apns(transport: transport, token: stranger)
        let result = await Self.drive(Self.delivery(token: Self.token("ab")), on: channel)
        // The server's configuration, not the device's: held for the operator, not failed.
        #expect(result.outcomes == [.misconfigured(reason: "InvalidProviderToken")])
        #expect(result.action == .hold(reason: "InvalidProviderToken"))
        try await harness.shutdown()
    }

    @Test(arguments: APNsTransportKind.allCases)
    func webPushIsEncryptedForTheSubscriberAndSignedWithVAPID(transport: APNsTransportKind) async throws {
        let harness = try await Harness()
        let subscription = harness.server.state.subscribe(baseURL: harness.server.baseURL)
        let channel = harness.webPush(transport: transport).channel
        let delivery = Self.delivery(token: "") { _ in
            .webPush(endpoint: subscription.endpoint, p256dh: subscription.p256dh, auth: subscription.auth)
        }
        let result = await Self.drive(delivery, on: channel)
        #expect(result.outcomes == [.accepted])
        let id = String(subscription.endpoint.split(separator: "/").last!)
        #expect(harness.server.state.webPushMessages(id: id) == [Self.payload])
        try await harness.shutdown()
    }

    @Test(arguments: APNsTransportKind.allCases)
    func webPushGoneAndRetriedSubscriptions(transport: APNsTransportKind) async throws {
        let harness = try await Harness()
        let channel = harness.webPush(transport: transport).channel
        for (prefix, expected) in [
            ("410-", DeliveryAction.pruneDevice(reason: "subscription gone (410)")), ("429-", .markDelivered),
        ] {
            let subscription = harness.server.state.subscribe(
                id: prefix + UUID().uuidString, baseURL: harness.server.baseURL)
            let delivery = Self.delivery(token: "") { _ in
                .webPush(endpoint: subscription.endpoint, p256dh: subscription.p256dh, auth: subscription.auth)
            }
            #expect(await Self.drive(delivery, on: channel).action == expected)
        }
        try await harness.shutdown()
    }

    /// Sends `deliveries` as the dispatcher does and returns the reports once every delivery has
    /// one. Every request has a 10 s deadline, so every delivery is reported well within the
    /// minute even on a loaded machine. A second report of a delivery would be a report past the
    /// count: the callers check that each index is reported once.
    static func sendBatch(_ deliveries: [OutboundDelivery], on channel: any DeliveryChannel) async throws
        -> [(Int, ProviderOutcome)]
    {
        let (reports, reporting) = AsyncStream.makeStream(of: (Int, ProviderOutcome).self)
        await channel.send(deliveries) { index, outcome in reporting.yield((index, outcome)) }
        // A minute at most: then the reports so far.
        let limit = Task {
            try await Task.sleep(for: .seconds(60))
            reporting.finish()
        }
        defer { limit.cancel() }
        var received: [(Int, ProviderOutcome)] = []
        for await report in reports {
            received.append(report)
            if received.count >= deliveries.count { break }
        }
        return received
    }

    @Test(arguments: APNsTransportKind.allCases)
    func aWebPushBatchReportsEveryDeliveryOnceWithItsOwnOutcome(transport: APNsTransportKind) async throws {
        let harness = try await Harness()
        let channel = harness.webPush(transport: transport).channel
        let base = harness.server.baseURL
        let state = harness.server.state
        let valid = (0..<150).map { _ in state.subscribe(baseURL: base) }
        let gone = state.subscribe(id: "410-" + UUID().uuidString, baseURL: base)
        func webPush(_ subscription: (endpoint: String, p256dh: String, auth: String)) -> OutboundDelivery {
            Self.delivery(token: "") { _ in
                .webPush(endpoint: subscription.endpoint, p256dh: subscription.p256dh, auth: subscription.auth)
            }
        }
        var deliveries = valid.map(webPush)
        var expected = [ProviderOutcome](repeating: .accepted, count: valid.count)
        deliveries.append(webPush(gone))
        expected.append(.gone(reason: "subscription gone (410)", since: nil))
        // Refused without a request, in the same batch: keys that are not base64url, an endpoint
        // that is not https, a payload too large to encrypt, a device of another channel.
        deliveries.append(webPush((valid[0].endpoint, "not base64url!", valid[0].auth)))
        expected.append(.gone(reason: "not a valid Web Push subscription", since: nil))
        deliveries.append(webPush(("http://127.0.0.1/webpush/x", valid[0].p256dh, valid[0].auth)))
        expected.append(.gone(reason: "not a valid Web Push subscription", since: nil))
        var large = webPush(valid[1])
        large.payload = Data(repeating: 0x61, count: 5000)
        deliveries.append(large)
        expected.append(.rejected(status: 413, reason: "payload of 5000 bytes is over the 3993-byte limit"))
        deliveries.append(Self.delivery(token: Self.token("ab")))
        expected.append(.gone(reason: "not a valid Web Push subscription", since: nil))

        let received = try await Self.sendBatch(deliveries, on: channel)
        #expect(received.map(\.0).sorted() == Array(deliveries.indices))
        let byIndex = Dictionary(received, uniquingKeysWith: { first, _ in first })
        for index in deliveries.indices {
            #expect(byIndex[index] == expected[index], "delivery \(index)")
        }
        // Each subscriber got the payload once, decrypted with its own keys; the one too large
        // reached nobody.
        for (index, subscription) in valid.enumerated() {
            let id = String(subscription.endpoint.split(separator: "/").last!)
            #expect(state.webPushMessages(id: id) == [Self.payload], "subscriber \(index)")
        }
        try await harness.shutdown()
    }

    /// Requests to one push service share its connections: the origin is the scheme, host and
    /// port, in lower case; the path keeps its query and drops a fragment.
    @Test func aWebPushEndpointSplitsIntoOriginAndPath() {
        let cases: [(String, String?, String?)] = [
            ("https://fcm.googleapis.com/fcm/send/abc:APA91b", "https://fcm.googleapis.com", "/fcm/send/abc:APA91b"),
            (
                "HTTPS://Updates.Push.Services.Mozilla.com/wpush/v2/gAAA?x=1#f",
                "https://updates.push.services.mozilla.com", "/wpush/v2/gAAA?x=1"
            ),
            ("https://127.0.0.1:4443", "https://127.0.0.1:4443", "/"),
            ("https://[::1]:8443/push/1", "https://[::1]:8443", "/push/1"),
            ("http://example.org/push", nil, nil),
            ("https://user@example.org/push", nil, nil),
            ("https:///push", nil, nil),
        ]
        for (endpoint, origin, path) in cases {
            let split = WebPushChannel.originAndPath(of: endpoint)
            #expect(split?.origin == origin, "\(endpoint)")
            #expect(split?.path == path, "\(endpoint)")
        }
    }

    /// A server that accepts the connection but never answers the TLS handshake: requests wait
    /// for the handshake, so it has a deadline of its own, and the request fails at it.
    @Test func aServerThatNeverAnswersTheHandshakeFailsTheRequest() async throws {
        let silent = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { $0.eventLoop.makeSucceededVoidFuture() }
            .bind(host: "127.0.0.1", port: 0).get()
        var options = HTTP2Client.Configuration()
        // Long enough that a loaded machine's event loop completes the loopback connect first (at
        // 300 ms a full run once failed it as a connect timeout): then the handshake's deadline ends it.
        options.connectTimeout = .seconds(2)
        let client = try HTTP2Client(
            origin: "https://127.0.0.1:\(try #require(silent.localAddress?.port))", configuration: options)
        // Without a deadline of its own the request would wait for ever: it runs apart, and the
        // test fails (rather than hangs) if it has not ended within 10 s.
        let request = Task { () async -> HTTP2Client.Failure? in
            do throws(HTTP2Client.Failure) {
                _ = try await client.execute(path: "/", headers: [], body: ByteBuffer(), timeout: .seconds(30))
                return nil
            } catch {
                return error
            }
        }
        let finished = Mutex<HTTP2Client.Failure??>(nil)
        Task {
            let failure = await request.value
            finished.withLock { $0 = .some(failure) }
        }
        let deadline = ContinuousClock.now + .seconds(10)
        while finished.withLock({ $0 == nil }) && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        switch finished.withLock({ $0 }) {
        case nil: Issue.record("the request was still waiting for the handshake after 10 s")
        case .some(nil): Issue.record("a request without a TLS handshake succeeded")
        case .some(.some(.cannotConnect(let why))): #expect(why.hasPrefix("no TLS handshake within"), "\(why)")
        case .some(.some(let failure)): Issue.record("unexpected failure: \(failure)")
        }
        // (Shutting down waits for the connection being opened: only once it has ended.)
        if finished.withLock({ $0 != nil }) { await client.shutdown() }
        try await silent.close()
    }

    /// A push service without HTTP/2 (ALPN offers only http/1.1): the lean client says so, and the
    /// channel reaches that service over HTTP/1.1 from then on, the first requests included.
    @Test func webPushFallsBackToHTTP1WhenTheServiceHasNoHTTP2() async throws {
        let harness = try await Harness(offersHTTP2: false)
        var options = HTTP2Client.Configuration()
        options.extraCertificateAuthorities = [harness.server.authority.caCertificatePEM]
        let lean = try HTTP2Client(origin: harness.server.baseURL, configuration: options)
        await #expect(throws: HTTP2Client.Failure.notHTTP2("http/1.1")) {
            try await lean.execute(
                method: "GET", path: "/stats", headers: [], body: ByteBuffer(), timeout: .seconds(10))
        }
        await lean.shutdown()

        let (channel, origins) = harness.webPush(transport: .http2)
        let state = harness.server.state
        let subscriptions = (0..<100).map { _ in state.subscribe(baseURL: harness.server.baseURL) }
        let deliveries = subscriptions.map { subscription in
            Self.delivery(token: "") { _ in
                .webPush(endpoint: subscription.endpoint, p256dh: subscription.p256dh, auth: subscription.auth)
            }
        }
        let received = try await Self.sendBatch(Array(deliveries.dropLast()), on: channel)
        #expect(received.map(\.0).sorted() == Array(0..<(deliveries.count - 1)))
        #expect(received.allSatisfy { $0.1 == .accepted })
        let single = await channel.deliver(deliveries.last!)
        #expect(single == .accepted, "the single delivery after the batch: \(single)")
        for subscription in subscriptions {
            let id = String(subscription.endpoint.split(separator: "/").last!)
            #expect(state.webPushMessages(id: id) == [Self.payload])
        }
        #expect(origins?.http1Origins.keys.sorted() == [harness.server.baseURL])
        try await harness.shutdown()
    }

    @Test func anAnsweredHTTP1RequestIsNeverALostConnection() async throws {
        let harness = try await Harness(offersHTTP2: false)
        let (channel, _) = harness.webPush(transport: .asyncHTTPClient)  // no lean client: HTTP/1.1 for all
        let state = harness.server.state
        let subscriptions = (0..<400).map { _ in state.subscribe(baseURL: harness.server.baseURL) }
        let outcomes = await withTaskGroup(of: ProviderOutcome.self) { group in
            var outcomes: [ProviderOutcome] = []
            for (index, subscription) in subscriptions.enumerated() {
                if index >= 8, let outcome = await group.next() { outcomes.append(outcome) }
                group.addTask {
                    await channel.deliver(
                        Self.delivery(token: "") { _ in
                            .webPush(
                                endpoint: subscription.endpoint, p256dh: subscription.p256dh, auth: subscription.auth)
                        })
                }
            }
            for await outcome in group { outcomes.append(outcome) }
            return outcomes
        }
        let failures = outcomes.filter { $0 != .accepted }
        #expect(failures.isEmpty, "\(failures.count) of 400 not accepted at once: \(failures.prefix(3))")
        for subscription in subscriptions {
            let id = String(subscription.endpoint.split(separator: "/").last!)
            #expect(state.webPushMessages(id: id) == [Self.payload])
        }
        try await harness.shutdown()
    }

    @Test func aServiceWithoutHTTP2IsAskedAgainAfterAnHour() async throws {
        let harness = try await Harness(offersHTTP2: false)
        let clock = ManualWallClock(Date())
        let (channel, lean) = harness.webPush(transport: .http2, clock: clock)
        let origins = try #require(lean)
        let state = harness.server.state
        var subscribers: [String] = []
        func push() async -> ProviderOutcome {
            let subscription = state.subscribe(baseURL: harness.server.baseURL)
            subscribers.append(String(subscription.endpoint.split(separator: "/").last!))
            return await channel.deliver(
                Self.delivery(token: "") { _ in
                    .webPush(endpoint: subscription.endpoint, p256dh: subscription.p256dh, auth: subscription.auth)
                })
        }
        let service = [harness.server.baseURL: "http/1.1"]
        #expect(origins.http1Origins.isEmpty)
        let outcome1 = await push()
        #expect(outcome1 == .accepted, "push 1: \(outcome1)")
        #expect(origins.http1Origins == service)
        clock.advance(by: 3599)
        let outcome2 = await push()
        #expect(outcome2 == .accepted, "push 2: \(outcome2)")
        #expect(origins.http1Origins == service)
        // An hour after it was found without HTTP/2, the service is due to be asked again: the
        // next push offers h2 first, learns the same, and still arrives.
        clock.advance(by: 1)
        #expect(origins.http1Origins.isEmpty)
        let outcome3 = await push()
        #expect(outcome3 == .accepted, "push 3: \(outcome3)")
        #expect(origins.http1Origins == service)
        for id in subscribers { #expect(state.webPushMessages(id: id) == [Self.payload]) }
        try await harness.shutdown()
    }

    @Test func theFakePushServiceChecksVAPIDOnEveryRequestEvenForAHeaderItKnows() throws {
        let state = FakeProviderState(
            configuration: FakeProviderConfiguration(verificationKey: P256.Signing.PrivateKey().publicKey))
        let origin = "https://127.0.0.1:4443"
        let subscription = state.subscribe(baseURL: origin)
        let endpoint = try #require(URL(string: subscription.endpoint))
        let id = endpoint.lastPathComponent
        let body = try WebPushEncryption.encrypt(
            Data("through 7".utf8), p256dh: try #require(Base64URL.decode(subscription.p256dh)),
            auth: try #require(Base64URL.decode(subscription.auth)))
        let now = Date()
        func status(_ authorization: String, at time: Date) -> Int? {
            let headers = FakeRequestHeaders([
                ("TTL", "60"), ("Content-Encoding", "aes128gcm"), ("Authorization", authorization),
            ])
            guard
                case .respond(let status, _, _) = state.webPush(
                    id: id, origin: origin, headers: headers, body: body, now: time)
            else { return nil }
            return status
        }
        let vapid = VAPID(key: P256.Signing.PrivateKey(), subject: "mailto:ops@example.org")
        let header = try vapid.authorization(endpoint: endpoint, now: now)
        #expect(status(header, at: now) == 201)
        #expect(status(header, at: now.addingTimeInterval(60)) == 201)
        // Known, but expired by now (headers are issued for 12 hours).
        #expect(status(header, at: now.addingTimeInterval(13 * 3600)) == 403)
        // The same token offered with another sender's key does not verify.
        let parsed = try #require(VAPID.parse(authorization: header))
        let stranger = VAPID(key: P256.Signing.PrivateKey(), subject: "mailto:ops@example.org")
        let otherKey = try #require(VAPID.parse(authorization: stranger.authorization(endpoint: endpoint, now: now)))
            .key
        #expect(status("vapid t=\(parsed.token), k=\(otherKey)", at: now) == 401)
        #expect(state.webPushMessages(id: id)?.count == 2)
    }

    @Test func webhooksAreSignedPerStandardWebhooks() async throws {
        let harness = try await Harness()
        let channel = harness.webhook()
        let endpoint = harness.server.state.webhookEndpoint(id: "503-hook", baseURL: harness.server.baseURL)
        let delivery = Self.delivery(token: "") { _ in .webhook(url: endpoint.url, secret: endpoint.secret) }
        let result = await Self.drive(delivery, on: channel)
        #expect(result.outcomes.count == 2)
        #expect(result.outcomes.last == .accepted)
        let received = try #require(harness.server.state.webhookMessages(id: "503-hook"))
        #expect(received.map(\.id) == ["msg_" + delivery.id.uuidString.lowercased()])
        #expect(received.first?.body == Self.payload)
        // A wrong secret is refused by the receiver.
        let wrong = Self.delivery(token: "") { _ in .webhook(url: endpoint.url, secret: StandardWebhooks.newSecret()) }
        #expect(await channel.deliver(wrong) == .rejected(status: 401, reason: "HTTP 401"))
        try await harness.shutdown()
    }
}
