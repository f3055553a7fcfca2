import Alerts
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// Where and how to reach APNs.
package struct APNsConfiguration: Sendable {
    /// `https://api.push.apple.com` in production, `https://api.sandbox.push.apple.com` for the
    /// sandbox; `nohit fake-apns`'s URL in tests and the demo.
    package var productionURL: String
    package var sandboxURL: String
    /// Each request's deadline; a stall past it is retried.
    package var timeout: TimeAmount

    package init(
        productionURL: String = "https://api.push.apple.com", sandboxURL: String = "https://api.sandbox.push.apple.com",
        timeout: TimeAmount = .seconds(10)
    ) {
        self.productionURL = productionURL
        self.sandboxURL = sandboxURL
        self.timeout = timeout
    }
}

/// One APNs request: `POST /3/device/<token>` to the environment's host.
package struct APNsRequest: Sendable {
    package var environment: APNsEnvironment
    package var deviceToken: String
    package var headers: [(String, String)]
    package var body: ByteBuffer
}

/// How APNs requests travel: the HTTP/2 connection(s) to the production and sandbox hosts.
package protocol APNsTransport: Sendable {
    /// Sends `POST /3/device/<token>` and classifies the answer.
    func send(_ request: APNsRequest) async -> ProviderOutcome
    /// Starts sending all of `requests`; `report` gets each classified answer by index.
    func send(_ requests: [APNsRequest], report: @escaping OutcomeReport) async
    func shutdown() async
}

extension APNsTransport {
    package func send(_ requests: [APNsRequest], report: @escaping OutcomeReport) async {
        await withTaskGroup(of: Void.self) { group in
            for (index, request) in requests.enumerated() {
                group.addTask { report(index, await send(request)) }
            }
        }
    }
}

/// APNs over AsyncHTTPClient.
package struct AsyncHTTPClientAPNsTransport: APNsTransport {
    let client: HTTPClient
    let configuration: APNsConfiguration

    package init(client: HTTPClient, configuration: APNsConfiguration) {
        self.client = client
        self.configuration = configuration
    }

    package func send(_ apns: APNsRequest) async -> ProviderOutcome {
        let base = apns.environment == .production ? configuration.productionURL : configuration.sandboxURL
        var request = HTTPClientRequest(url: "\(base)/3/device/\(apns.deviceToken)")
        request.method = .POST
        request.headers.add(contentsOf: apns.headers)
        request.body = .bytes(apns.body)
        do {
            let response = try await client.execute(request, timeout: configuration.timeout)
            let body = try await response.body.collect(upTo: 64 * 1024)
            return OutcomeClassifier.apns(
                status: Int(response.status.code), body: body, retryAfter: response.headers.first(name: "retry-after"))
        } catch {
            return OutcomeClassifier.failure(error)
        }
    }

    /// The client is shared with other channels; its owner shuts it down.
    package func shutdown() async {}
}

/// APNs over this project's lean HTTP/2 client (`HTTP2Client`): frames straight onto a shared
/// connection per host, writes coalesced. The high-throughput path.
package struct HTTP2APNsTransport: APNsTransport {
    let production: HTTP2Client
    let sandbox: HTTP2Client
    let timeout: TimeAmount

    package init(configuration: APNsConfiguration, client: HTTP2Client.Configuration = .init()) throws {
        var client = client
        client.unindexedHeaders.formUnion([":path", "apns-id"])
        production = try HTTP2Client(origin: configuration.productionURL, configuration: client)
        sandbox =
            configuration.sandboxURL == configuration.productionURL
            ? production : try HTTP2Client(origin: configuration.sandboxURL, configuration: client)
        timeout = configuration.timeout
    }

    package func send(_ request: APNsRequest) async -> ProviderOutcome {
        let client = request.environment == .production ? production : sandbox
        do {
            let response = try await client.execute(
                path: "/3/device/\(request.deviceToken)", headers: request.headers, body: request.body,
                timeout: timeout)
            return Self.outcome(of: .success(response))
        } catch {
            return Self.outcome(of: .failure(error))
        }
    }

    /// Each environment's requests go to its client in one batch.
    package func send(_ requests: [APNsRequest], report: @escaping OutcomeReport) async {
        for environment in [APNsEnvironment.production, .sandbox] {
            let indices = requests.indices.filter { requests[$0].environment == environment }
            guard !indices.isEmpty else { continue }
            let client = environment == .production ? production : sandbox
            let outgoing = indices.map {
                HTTP2Client.Outgoing(
                    path: "/3/device/\(requests[$0].deviceToken)", headers: requests[$0].headers,
                    body: requests[$0].body)
            }
            await client.submit(outgoing, timeout: timeout) { index, result in
                report(indices[index], Self.outcome(of: result))
            }
        }
    }

    static func outcome(of result: Result<HTTP2Client.Response, HTTP2Client.Failure>) -> ProviderOutcome {
        switch result {
        case .success(let response):
            OutcomeClassifier.apns(
                status: response.status, body: response.body, retryAfter: response.headers.first(name: "retry-after"))
        case .failure(let failure):
            OutcomeClassifier.failure(failure)
        }
    }

    package func shutdown() async {
        await production.shutdown()
        if sandbox !== production { await sandbox.shutdown() }
    }
}

/// APNs over HTTP/2: alerts and Live Activity updates, authenticated with the shared provider
/// token, `apns-id` the delivery id, a collapse id per bid.
package struct APNsChannel: DeliveryChannel {
    package let kind: ChannelKind
    let transport: any APNsTransport
    let token: APNsProviderToken

    /// `kind` is `.apns` for alerts or `.liveActivity` for Live Activity updates.
    package init(kind: ChannelKind = .apns, transport: any APNsTransport, token: APNsProviderToken) {
        self.kind = kind
        self.transport = transport
        self.token = token
    }

    /// Over AsyncHTTPClient.
    package init(
        kind: ChannelKind = .apns, client: HTTPClient, configuration: APNsConfiguration, token: APNsProviderToken
    ) {
        self.init(
            kind: kind, transport: AsyncHTTPClientAPNsTransport(client: client, configuration: configuration),
            token: token)
    }

    package func refreshCredentials() async -> Bool {
        (try? token.refreshRejected()) ?? false
    }

    /// Notes which provider token an ExpiredProviderToken answer refused, so that the refresh
    /// replaces that token once, not once per refused request.
    private func noting(_ outcome: ProviderOutcome, sentWith bearer: String) -> ProviderOutcome {
        if outcome == .expiredProviderToken { token.reject(bearer) }
        return outcome
    }

    /// The provider token to send with, or what every delivery meets when it cannot be signed.
    private func bearer() -> Result<String, Refusal> {
        do {
            return .success(try token.current())
        } catch {
            return .failure(
                Refusal(outcome: .transient(reason: "cannot sign the provider token: \(error)", retryAfter: nil)))
        }
    }

    package func deliver(_ delivery: OutboundDelivery) async -> ProviderOutcome {
        let bearer: String
        switch self.bearer() {
        case .failure(let refusal): return refusal.outcome
        case .success(let signed): bearer = signed
        }
        switch request(for: delivery, bearer: bearer) {
        case .failure(let refusal):
            return refusal.outcome
        case .success(let request):
            return noting(await transport.send(request), sentWith: bearer)
        }
    }

    /// One provider token for the whole batch, then every request to the transport at once.
    package func send(_ deliveries: [OutboundDelivery], report: @escaping OutcomeReport) async {
        let bearer: String
        switch self.bearer() {
        case .failure(let refusal):
            for index in deliveries.indices { report(index, refusal.outcome) }
            return
        case .success(let signed): bearer = signed
        }
        var requests: [APNsRequest] = []
        var indices: [Int] = []
        requests.reserveCapacity(deliveries.count)
        indices.reserveCapacity(deliveries.count)
        for (index, delivery) in deliveries.enumerated() {
            switch request(for: delivery, bearer: bearer) {
            case .failure(let refusal): report(index, refusal.outcome)
            case .success(let request):
                requests.append(request)
                indices.append(index)
            }
        }
        let positions = indices
        await transport.send(requests) { index, outcome in
            report(positions[index], noting(outcome, sentWith: bearer))
        }
    }

    private struct Refusal: Error {
        var outcome: ProviderOutcome
    }

    /// The request for `delivery`: `apns-id` the delivery id, a collapse id per bid.
    private func request(for delivery: OutboundDelivery, bearer: String) -> Result<APNsRequest, Refusal> {
        let deviceToken: String
        let environment: APNsEnvironment
        var topic: String
        let pushType: String
        switch delivery.channel {
        case .apns(let token, let env, let bundle):
            (deviceToken, environment, topic, pushType) = (token, env, bundle, "alert")
        case .liveActivity(let token, let env, let bundle):
            (deviceToken, environment, topic, pushType) = (token, env, bundle, "liveactivity")
            topic += ".push-type.liveactivity"
        default:
            return .failure(Refusal(outcome: .rejected(status: 0, reason: "not an APNs device")))
        }
        let headers = [
            ("authorization", "bearer \(bearer)"),
            ("apns-topic", topic),
            ("apns-push-type", pushType),
            ("apns-priority", "10"),
            ("apns-expiration", String(Int(delivery.expiresAt.timeIntervalSince1970))),
            ("apns-id", delivery.id.text()),
            ("apns-collapse-id", String(delivery.collapseKey.utf8.prefix(64))!),
            ("content-type", "application/json"),
        ]
        return .success(
            APNsRequest(
                environment: environment, deviceToken: deviceToken, headers: headers,
                body: ByteBuffer(bytes: delivery.payload)))
    }
}
