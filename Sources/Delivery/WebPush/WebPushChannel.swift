import Alerts
import Clocks
import Foundation
import NIOCore
import Synchronization

/// Web Push (RFC 8030): the payload encrypted for the subscription (RFC 8291), the server
/// identified with VAPID (RFC 8292).
///
/// With `origins`, requests to a push service go over the lean HTTP/2 client, a pool per origin
/// (browsers' subscriptions point at a handful of services); a service that does not offer
/// HTTP/2 is remembered (for an hour) and reached over HTTP/1.1, as every service is without
/// `origins`. Either way the endpoint's address is checked when connecting (the URL is the
/// user's) and a redirect is never followed.
package struct WebPushChannel: DeliveryChannel {
    package let kind = ChannelKind.webPush
    let client: HTTP1Client
    let vapid: VAPIDAuthorizations
    let clock: any WallClock
    let timeout: TimeAmount
    let origins: WebPushOrigins?

    package init(
        client: HTTP1Client, vapid: VAPID, clock: any WallClock, timeout: TimeAmount = .seconds(10),
        origins: WebPushOrigins? = nil
    ) {
        self.client = client
        self.vapid = VAPIDAuthorizations(vapid: vapid)
        self.clock = clock
        self.timeout = timeout
        self.origins = origins
    }

    /// A request ready to go: encrypted, signed, its headers set; for the push service at `origin`.
    struct Prepared: Sendable {
        var origin: String
        var request: HTTP2Client.Outgoing
    }

    package func deliver(_ delivery: OutboundDelivery) async -> ProviderOutcome {
        switch prepare(delivery) {
        case .failure(let outcome):
            return outcome.outcome
        case .success(let request):
            if delivery.isPastSendBy { return OutboundDelivery.notSent }
            if let origins, let lean = origins.client(for: request.origin) {
                do {
                    let response = try await lean.execute(
                        path: request.request.path, headers: request.request.headers, body: request.request.body,
                        timeout: timeout)
                    return Self.outcome(of: .success(response))
                } catch .notHTTP2(let why) {
                    origins.noHTTP2(at: request.origin, why: why)
                    await origins.closeRetired()
                } catch {
                    return Self.outcome(of: .failure(error))
                }
            }
            return await sendOverHTTP1(request)
        }
    }

    /// Encrypts and signs the batch (over the cores), then puts each push service's share on its
    /// HTTP/2 connections in one step. A share whose service turns out not to speak HTTP/2 goes
    /// over HTTP/1.1, in child tasks; returns once those are answered and the rest on their way.
    package func send(_ deliveries: [OutboundDelivery], report: @escaping OutcomeReport) async {
        guard let origins else {
            await withTaskGroup(of: Void.self) { group in
                for (index, delivery) in deliveries.enumerated() {
                    group.addTask { report(index, await deliver(delivery)) }
                }
            }
            return
        }
        let prepared = await prepareAll(deliveries)
        var byOrigin: [String: [(index: Int, request: Prepared)]] = [:]
        for (index, result) in prepared.enumerated() {
            switch result {
            case .failure(let outcome): report(index, outcome.outcome)
            case .success(let request): byOrigin[request.origin, default: []].append((index, request))
            }
        }
        // What must go over HTTP/1.1 instead, as the lean client finds it out; finished once every
        // request given to a lean client is answered.
        let routed = byOrigin.map { (origin: $0.key, share: $0.value, lean: origins.client(for: $0.key)) }
        let (fallback, fallbackInput) = AsyncStream.makeStream(of: (index: Int, request: Prepared).self)
        let awaited = Countdown(routed.reduce(0) { $0 + ($1.lean == nil ? 0 : $1.share.count) })
        if awaited.isDone { fallbackInput.finish() }
        await withTaskGroup(of: Void.self) { group in
            for (origin, share, lean) in routed {
                guard let lean else {
                    for (index, request) in share {
                        group.addTask { report(index, await sendOverHTTP1(request)) }
                    }
                    continue
                }
                await lean.submit(share.map(\.request.request), timeout: timeout) { position, result in
                    let (index, request) = share[position]
                    if case .failure(.notHTTP2(let why)) = result {
                        origins.noHTTP2(at: origin, why: why)
                        fallbackInput.yield((index, request))
                    } else {
                        report(index, Self.outcome(of: result))
                    }
                    if awaited.countDown() { fallbackInput.finish() }
                }
            }
            for await (index, request) in fallback {
                group.addTask { report(index, await sendOverHTTP1(request)) }
            }
        }
        await origins.closeRetired()
    }

    /// Answers still to come, from any thread.
    private final class Countdown: Sendable {
        private let remaining: Atomic<Int>
        init(_ count: Int) { remaining = Atomic(count) }
        var isDone: Bool { remaining.load(ordering: .acquiring) == 0 }
        /// One more answered; true for the last.
        func countDown() -> Bool { remaining.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 }
    }

    /// An outcome decided before sending (a bad subscription, a payload too large).
    struct Unsendable: Error {
        var outcome: ProviderOutcome
    }

    func prepare(_ delivery: OutboundDelivery) -> Result<Prepared, Unsendable> {
        guard case .webPush(let endpoint, let p256dh, let auth) = delivery.channel,
            let target = Self.originAndPath(of: endpoint),
            let key = Base64URL.decode(p256dh), let secret = Base64URL.decode(auth)
        else { return .failure(Unsendable(outcome: .gone(reason: "not a valid Web Push subscription", since: nil))) }
        let body: Data
        let authorization: String
        do {
            body = try WebPushEncryption.encrypt(delivery.payload, p256dh: key, auth: secret)
            authorization = try vapid.authorization(audience: target.origin, now: clock.now())
        } catch let failure as WebPushEncryption.Failure {
            return .failure(
                Unsendable(
                    outcome: failure == .tooLarge(delivery.payload.count)
                        ? .rejected(status: 413, reason: "\(failure)") : .gone(reason: "\(failure)", since: nil)))
        } catch {
            return .failure(Unsendable(outcome: .rejected(status: 0, reason: "cannot sign: \(error)")))
        }
        let ttl = max(0, Int(delivery.expiresAt.timeIntervalSince(clock.now())))
        let headers = [
            ("ttl", "\(ttl)"),
            ("urgency", "high"),
            // Topic: at most 32 base64url characters; a bid's alerts replace each other while pending.
            ("topic", String(Base64URL.encode(Data(delivery.collapseKey.utf8)).prefix(32))),
            ("content-encoding", "aes128gcm"),
            ("content-type", "application/octet-stream"),
            ("authorization", authorization),
        ]
        return .success(
            Prepared(
                origin: target.origin,
                request: HTTP2Client.Outgoing(
                    path: target.path, headers: headers, body: ByteBuffer(bytes: body), sendBy: delivery.sendBy)))
    }

    /// Encryption is most of a push's CPU: slices of the batch are prepared in parallel.
    private func prepareAll(_ deliveries: [OutboundDelivery]) async -> [Result<Prepared, Unsendable>] {
        let slices = max(1, min(ProcessInfo.processInfo.activeProcessorCount, deliveries.count / 64))
        guard slices > 1 else { return deliveries.map(prepare) }
        let size = (deliveries.count + slices - 1) / slices
        return await withTaskGroup(of: (Int, [Result<Prepared, Unsendable>]).self) { group in
            for start in stride(from: 0, to: deliveries.count, by: size) {
                let slice = deliveries[start..<min(start + size, deliveries.count)]
                group.addTask { (start, slice.map(prepare)) }
            }
            var results = [Result<Prepared, Unsendable>?](repeating: nil, count: deliveries.count)
            for await (start, prepared) in group {
                for (offset, result) in prepared.enumerated() { results[start + offset] = result }
            }
            return results.map { $0! }
        }
    }

    private func sendOverHTTP1(_ prepared: Prepared) async -> ProviderOutcome {
        if OutboundDelivery.hasPassed(prepared.request.sendBy) { return OutboundDelivery.notSent }
        do {
            let response = try await client.execute(
                url: prepared.origin + prepared.request.path, headers: prepared.request.headers,
                body: prepared.request.body, timeout: timeout)
            return OutcomeClassifier.web(
                status: response.status, retryAfter: response.headers.first(name: "retry-after"),
                location: response.headers.first(name: "location"), goneStatuses: [404, 410], thing: "subscription")
        } catch {
            return OutcomeClassifier.failure(error)
        }
    }

    static func outcome(of result: Result<HTTP2Client.Response, HTTP2Client.Failure>) -> ProviderOutcome {
        switch result {
        case .success(let response):
            OutcomeClassifier.web(
                status: response.status, retryAfter: response.headers.first(name: "retry-after"),
                location: response.headers.first(name: "location"), goneStatuses: [404, 410], thing: "subscription")
        case .failure(let failure):
            OutcomeClassifier.failure(failure)
        }
    }

    /// `https://host[:port]` and the path with its query, from an https endpoint.
    package static func originAndPath(of endpoint: String) -> (origin: String, path: String)? {
        let scheme = "https://"
        guard endpoint.lowercased().hasPrefix(scheme) else { return nil }
        let rest = endpoint.dropFirst(scheme.count)
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        guard !authority.isEmpty, !authority.contains("@") else { return nil }
        var path = String(rest[authorityEnd...].prefix { $0 != "#" })
        if !path.hasPrefix("/") { path = "/" + path }
        return (scheme + authority.lowercased(), path)
    }
}
