import Alerts
import Foundation
import NIOCore

/// APNs broadcast push (iOS 18): channel management on Apple's management host, and broadcasts
/// on a channel — one request updates every Live Activity subscribed to it. The same provider
/// token as the app's pushes; over this project's HTTP/2 client.
///
/// Hosts (settings, as Apple's documents name two forms for broadcasts): management
/// `https://api-manage-broadcast.push.apple.com:2196` (sandbox `api-manage-broadcast.sandbox…:2195`),
/// broadcasts `https://api.push.apple.com` (or `api-broadcast.push.apple.com`).
package struct APNsBroadcastClient: Sendable {
    /// A refusal or failure of a management request: what it was, and why.
    package struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        package var status: Int
        /// APNs's reason (`ChannelNotRegistered`, `TooManyChannels` …), or the transport's failure.
        package var reason: String

        package var description: String { status == 0 ? reason : "\(status) \(reason)" }

        package init(status: Int, reason: String) {
            self.status = status
            self.reason = reason
        }
    }

    /// What a channel was made with.
    package struct Channel: Sendable, Hashable {
        package var id: String
        /// Whether APNs keeps the latest message (policy 1) or none (0, the higher budget).
        package var storesMessages: Bool

        package init(id: String, storesMessages: Bool) {
            self.id = id
            self.storesMessages = storesMessages
        }
    }

    let management: HTTP2Client
    let broadcasts: HTTP2Client
    let token: APNsProviderToken
    /// The app's bundle id.
    package let bundleID: String
    let timeout: TimeAmount

    package init(
        managementURL: String, broadcastURL: String, bundleID: String, token: APNsProviderToken,
        timeout: TimeAmount = .seconds(10), client: HTTP2Client.Configuration = .init()
    ) throws {
        var client = client
        client.unindexedHeaders.formUnion(["apns-id", "apns-channel-id", "apns-request-id"])
        management = try HTTP2Client(origin: managementURL, configuration: client)
        broadcasts =
            broadcastURL == managementURL ? management : try HTTP2Client(origin: broadcastURL, configuration: client)
        self.bundleID = bundleID
        self.token = token
        self.timeout = timeout
    }

    private var appPath: String {
        "/1/apps/\(bundleID.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? bundleID)"
    }

    /// Sends one management request, with the provider token made again once if APNs says it
    /// expired.
    private func manage(
        _ method: String, _ path: String, channel: String? = nil, body: Data = Data()
    ) async throws(Failure) -> HTTP2Client.Response {
        for attempt in 0..<2 {
            let jwt: String
            do {
                jwt = try token.current()
            } catch {
                throw Failure(status: 0, reason: "cannot sign the provider token: \(error)")
            }
            var headers = [("authorization", "bearer \(jwt)"), ("apns-request-id", UUID().text())]
            if let channel { headers.append(("apns-channel-id", channel)) }
            if !body.isEmpty { headers.append(("content-type", "application/json")) }
            let response: HTTP2Client.Response
            do {
                response = try await management.execute(
                    method: method, path: path, headers: headers, body: ByteBuffer(bytes: body), timeout: timeout)
            } catch {
                throw Failure(status: 0, reason: "\(error)")
            }
            if response.status == 403, Self.reason(response) == "ExpiredProviderToken", attempt == 0 {
                token.reject(jwt)
                _ = try? token.refreshRejected()
                continue
            }
            return response
        }
        throw Failure(status: 403, reason: "ExpiredProviderToken")
    }

    static func reason(_ response: HTTP2Client.Response) -> String {
        let json = (try? JSONSerialization.jsonObject(with: Data(response.body.readableBytesView))) as? [String: Any]
        return json?["reason"] as? String ?? "HTTP \(response.status)"
    }

    /// Makes a channel for Live Activities: its id.
    package func createChannel(storesMessages: Bool = false) async throws(Failure) -> String {
        let body = Data(#"{"message-storage-policy": \#(storesMessages ? 1 : 0), "push-type": "LiveActivity"}"#.utf8)
        let response = try await manage("POST", "\(appPath)/channels", body: body)
        guard response.status == 201 else { throw Failure(status: response.status, reason: Self.reason(response)) }
        guard let id = response.headers.first(name: "apns-channel-id"), !id.isEmpty else {
            throw Failure(status: response.status, reason: "no apns-channel-id in the answer")
        }
        return id
    }

    /// The channel `id`, or nil when APNs does not know it (`ChannelNotRegistered`).
    package func channel(_ id: String) async throws(Failure) -> Channel? {
        let response = try await manage("GET", "\(appPath)/channels", channel: id)
        if response.status == 400, Self.reason(response) == "ChannelNotRegistered" { return nil }
        guard response.status == 200 else { throw Failure(status: response.status, reason: Self.reason(response)) }
        let json = (try? JSONSerialization.jsonObject(with: Data(response.body.readableBytesView))) as? [String: Any]
        return Channel(id: id, storesMessages: (json?["message-storage-policy"] as? Int) == 1)
    }

    /// Deletes the channel `id`; false when APNs did not know it (already gone).
    @discardableResult
    package func deleteChannel(_ id: String) async throws(Failure) -> Bool {
        let response = try await manage("DELETE", "\(appPath)/channels", channel: id)
        if response.status == 400, Self.reason(response) == "ChannelNotRegistered" { return false }
        guard response.status == 204 || response.status == 200 else {
            throw Failure(status: response.status, reason: Self.reason(response))
        }
        return true
    }

    /// Every channel of the app in this environment.
    package func allChannels() async throws(Failure) -> [String] {
        let response = try await manage("GET", "\(appPath)/all-channels")
        guard response.status == 200 else { throw Failure(status: response.status, reason: Self.reason(response)) }
        let json = (try? JSONSerialization.jsonObject(with: Data(response.body.readableBytesView))) as? [String: Any]
        guard let channels = json?["channels"] as? [String] else {
            throw Failure(status: response.status, reason: "no channels list in the answer")
        }
        return channels
    }

    /// The largest broadcast payload APNs takes.
    package static let maximumPayload = 5120

    /// Broadcasts `payload` (a Live Activity update or end) on `channel`: priority 10 for what
    /// must be seen now (it counts against each device's budget), 5 otherwise; expiring at once
    /// (0), as a channel that stores no message requires. Classified as a device push's answer is;
    /// `apnsID` makes a resend after a crash the same broadcast.
    package func broadcast(
        channel: String, payload: Data, priority: Int, expiration: Int = 0, apnsID: String
    ) async -> ProviderOutcome {
        guard payload.count <= Self.maximumPayload else {
            return .rejected(status: 413, reason: "PayloadTooLarge (\(payload.count) bytes, at most 5120)")
        }
        let jwt: String
        do {
            jwt = try token.current()
        } catch {
            return .rejected(status: 0, reason: "cannot sign the provider token: \(error)")
        }
        let headers = [
            ("authorization", "bearer \(jwt)"), ("apns-channel-id", channel), ("apns-push-type", "liveactivity"),
            ("apns-expiration", "\(expiration)"), ("apns-priority", "\(priority)"), ("apns-id", apnsID),
            ("apns-request-id", apnsID),
        ]
        do {
            let response = try await broadcasts.execute(
                path: "/4/broadcasts/apps/\(bundleID)", headers: headers, body: ByteBuffer(bytes: payload),
                timeout: timeout)
            let outcome = OutcomeClassifier.apns(
                status: response.status, body: response.body, retryAfter: response.headers.first(name: "retry-after"))
            if case .expiredProviderToken = outcome { token.reject(jwt) }
            return outcome
        } catch {
            return OutcomeClassifier.failure(error)
        }
    }

    package func shutdown() async {
        await management.shutdown()
        if broadcasts !== management { await broadcasts.shutdown() }
    }
}
