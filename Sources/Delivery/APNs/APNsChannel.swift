import Alerts
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// APNs over HTTP/2: alerts and Live Activity updates, authenticated with the shared provider
/// token — or, for an app the operator declared with a key of its own (another team), that app's,
/// chosen by the device's topic —, `apns-id` the delivery id, a collapse id per bid.
package struct APNsChannel: DeliveryChannel {
    package let kind: ChannelKind
    let transport: any APNsTransport
    /// The server-wide provider token, for every topic without one of its own; nil when only the
    /// declared apps have keys.
    let token: APNsProviderToken?
    /// Provider tokens by topic (an app's bundle id), for apps with keys of their own.
    let tokensByTopic: [String: APNsProviderToken]
    /// The topics of the apps the operator declared: a refusal of one of them for its topic is the
    /// configuration's (held); of any other topic, the device's (rejected).
    let declaredTopics: Set<String>
    /// For push-to-start (iOS 18): the broadcast channel kept for a bid at a delay bucket, if made.
    let starts: StartChannels?

    /// How a push-to-start finds the channel its activity is to follow.
    package struct StartChannels: Sendable {
        /// The channel kept for a bid, app, environment and delay bucket.
        package var channel: @Sendable (BroadcastChannelPlan.Key) -> String?
        /// The pipeline's clock.
        package var now: @Sendable () -> Date
        /// How long after its moment a start waits for the bid's channel to be made (it is made off
        /// the game's path, at once); past it, the start asks for the activity's own token instead.
        package var wait: TimeInterval = 30
        /// When a start waiting for its channel is tried again.
        package var retry: TimeInterval = 2

        package init(
            channel: @escaping @Sendable (BroadcastChannelPlan.Key) -> String?, now: @escaping @Sendable () -> Date
        ) {
            self.channel = channel
            self.now = now
        }
    }

    /// `kind` is `.apns` for alerts, `.liveActivity` for Live Activity updates,
    /// `.liveActivityChannel` for broadcasts, `.liveActivityStart` for push-to-start (`starts` names
    /// the channels an activity follows).
    package init(
        kind: ChannelKind = .apns, transport: any APNsTransport, token: APNsProviderToken?,
        tokensByTopic: [String: APNsProviderToken] = [:], declaredTopics: Set<String> = [],
        starts: StartChannels? = nil
    ) {
        self.kind = kind
        self.transport = transport
        self.token = token
        self.tokensByTopic = tokensByTopic
        self.declaredTopics = declaredTopics
        self.starts = starts
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
        var refreshed = false
        for token in ([token].compactMap { $0 } + tokensByTopic.values) {
            if (try? token.refreshRejected()) ?? false { refreshed = true }
        }
        return refreshed
    }

    /// The provider token for a delivery's topic.
    private func providerToken(for delivery: OutboundDelivery) -> APNsProviderToken? {
        guard !tokensByTopic.isEmpty, let app = delivery.channel.apnsApp else { return token }
        return tokensByTopic[app.topic] ?? token
    }

    /// The provider token to send with, or what every delivery meets when it cannot be signed.
    private func bearer(_ token: APNsProviderToken?, topic: @autoclosure () -> String) -> Result<String, Refusal> {
        guard let token else {
            return .failure(
                Refusal(
                    outcome: .rejected(
                        status: 0, reason: "no APNs key for the app \(topic()) (declare its key, or a server-wide one)")
                ))
        }
        do {
            return .success(try token.current())
        } catch {
            return .failure(
                Refusal(outcome: .transient(reason: "cannot sign the provider token: \(error)", retryAfter: nil)))
        }
    }

    private static func topic(of delivery: OutboundDelivery) -> String {
        delivery.channel.apnsApp?.topic ?? "?"
    }

    package func deliver(_ delivery: OutboundDelivery) async -> ProviderOutcome {
        let token = providerToken(for: delivery)
        let bearer: String
        switch self.bearer(token, topic: Self.topic(of: delivery)) {
        case .failure(let refusal): return refusal.outcome
        case .success(let signed): bearer = signed
        }
        switch request(for: delivery, bearer: bearer) {
        case .failure(let refusal):
            return refusal.outcome
        case .success(let request):
            if delivery.isPastSendBy { return OutboundDelivery.notSent }
            let outcome = await transport.send(request)
            // Which token an ExpiredProviderToken refused: the refresh replaces it once.
            if outcome == .expiredProviderToken { token?.reject(bearer) }
            return screened(outcome, topic: Self.topic(of: delivery))
        }
    }

    /// One provider token per key for the whole batch (one for all, unless apps have keys of
    /// their own), then every request to the transport at once.
    package func send(_ deliveries: [OutboundDelivery], report: @escaping OutcomeReport) async {
        var bearers: [ObjectIdentifier: String] = [:]
        var requests: [APNsRequest] = []
        var indices: [Int] = []
        var signers: [(token: APNsProviderToken, bearer: String)?] = []
        requests.reserveCapacity(deliveries.count)
        indices.reserveCapacity(deliveries.count)
        signers.reserveCapacity(deliveries.count)
        for (index, delivery) in deliveries.enumerated() {
            let token = providerToken(for: delivery)
            let bearer: String
            if let token, let signed = bearers[ObjectIdentifier(token)] {
                bearer = signed
            } else {
                switch self.bearer(token, topic: Self.topic(of: delivery)) {
                case .failure(let refusal):
                    report(index, refusal.outcome)
                    continue
                case .success(let signed):
                    bearer = signed
                    if let token { bearers[ObjectIdentifier(token)] = signed }
                }
            }
            switch request(for: delivery, bearer: bearer) {
            case .failure(let refusal): report(index, refusal.outcome)
            case .success(var request):
                request.sendBy = delivery.sendBy
                requests.append(request)
                indices.append(index)
                signers.append(token.map { ($0, bearer) })
            }
        }
        let (positions, used) = (indices, signers)
        let topics = indices.map { Self.topic(of: deliveries[$0]) }
        await transport.send(requests) { [self] index, outcome in
            if outcome == .expiredProviderToken, let signer = used[index] { signer.token.reject(signer.bearer) }
            report(positions[index], screened(outcome, topic: topics[index]))
        }
    }

    /// A refusal for a topic the operator did not declare is the device's, not the configuration's:
    /// one registration must not hold deliveries and degrade the service.
    func screened(_ outcome: ProviderOutcome, topic: String) -> ProviderOutcome {
        Self.screened(outcome, topic: topic, declared: declaredTopics)
    }

    package static func screened(_ outcome: ProviderOutcome, topic: String, declared: Set<String>) -> ProviderOutcome {
        guard case .misconfigured(let reason) = outcome, let status = ProviderOutcome.topicReasons[reason],
            !declared.contains(topic)
        else { return outcome }
        return .rejected(status: status, reason: reason)
    }

    /// A broadcast on a channel (`POST /4/broadcasts/apps/<bundle>`, iOS 18): `apns-request-id`
    /// and `apns-id` the delivery id (a resend after a crash carries the same; APNs does not say it
    /// deduplicates broadcasts, so a fan may see the same state twice), expiring at once as a channel
    /// that stores no message requires, priority 10 for what must be seen now (the bid ended: the
    /// last out, a hit), 5 for the rest; at most 5,120 bytes, refused here before sending.
    static func broadcast(
        _ delivery: OutboundDelivery, channel: String, environment: APNsEnvironment, bundle: String, bearer: String
    ) -> Result<APNsRequest, Refusal> {
        guard delivery.payload.count <= APNsBroadcastClient.maximumPayload else {
            return .failure(
                Refusal(
                    outcome: .rejected(
                        status: 413,
                        reason: "PayloadTooLarge (\(delivery.payload.count) bytes, a broadcast takes at most 5120)")))
        }
        let headers = [
            ("authorization", "bearer \(bearer)"),
            ("apns-channel-id", channel),
            ("apns-push-type", "liveactivity"),
            ("apns-priority", Payloads.endsActivity(delivery.payload) ? "10" : "5"),
            ("apns-expiration", "0"),
            // Apple names a broadcast's request `apns-request-id`; the fake keys its ledger on `apns-id`.
            ("apns-id", delivery.id.text()),
            ("apns-request-id", delivery.id.text()),
            ("content-type", "application/json"),
        ]
        let app = bundle.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? bundle
        let path = "/4/broadcasts/apps/\(app)"
        return .success(
            APNsRequest(
                environment: environment, deviceToken: "", headers: headers, body: ByteBuffer(bytes: delivery.payload),
                broadcastPath: path))
    }

    struct Refusal: Error {
        var outcome: ProviderOutcome
    }

    /// The request for `delivery`: `apns-id` the delivery id, a collapse id per bid.
    private func request(for delivery: OutboundDelivery, bearer: String) -> Result<APNsRequest, Refusal> {
        if case .liveActivityChannel(let id, _, let environment, let bundle) = delivery.channel {
            return Self.broadcast(delivery, channel: id, environment: environment, bundle: bundle, bearer: bearer)
        }
        let deviceToken: String
        let environment: APNsEnvironment
        var topic: String
        let pushType: String
        var payload = delivery.payload
        switch delivery.channel {
        case .apns(let token, let env, let bundle):
            (deviceToken, environment, topic, pushType) = (token, env, bundle, "alert")
        case .liveActivity(let token, let env, let bundle, _):
            (deviceToken, environment, topic, pushType) = (token, env, bundle, "liveactivity")
            topic += ".push-type.liveactivity"
        case .liveActivityStart(let token, let env, let bundle, let updates):
            (deviceToken, environment, topic, pushType) = (
                token, env, bundle + ".push-type.liveactivity", "liveactivity"
            )
            guard var start = Payloads.StoredStart(payload) else {
                return .failure(Refusal(outcome: .rejected(status: 0, reason: "unreadable start")))
            }
            if updates == .channel, let bucket = start.bucket {
                switch startChannel(for: delivery, bucket: bucket, topic: bundle, environment: env) {
                case .failure(let refusal): return .failure(refusal)
                case .success(let found): start.follow(found)
                }
            }
            do {
                payload = try start.sent(at: starts?.now() ?? Date())
            } catch {
                return .failure(Refusal(outcome: .rejected(status: 0, reason: "unwritable start: \(error)")))
            }
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
                body: ByteBuffer(bytes: payload)))
    }

    /// The channel a push-to-start names: the bid's at the device's delay bucket; while it is
    /// being made (for `wait` after the moment) the start waits; then none (the start asks for
    /// the activity's own token).
    private func startChannel(
        for delivery: OutboundDelivery, bucket: Int, topic: String, environment: APNsEnvironment
    ) -> Result<String?, Refusal> {
        guard let starts else { return .success(nil) }
        let key = BroadcastChannelPlan.Key(
            bid: delivery.collapseKey, topic: topic, environment: environment, delay: bucket)
        if let channel = starts.channel(key) { return .success(channel) }
        guard starts.now().timeIntervalSince(delivery.createdAt) < starts.wait else { return .success(nil) }
        return .failure(
            Refusal(
                outcome: .transient(
                    reason: "waiting for the broadcast channel of \(key) to be made", retryAfter: starts.retry)))
    }
}
