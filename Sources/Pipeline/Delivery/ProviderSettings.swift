import Alerts
import AsyncHTTPClient
import Clocks
import Crypto
import Delivery
import Foundation
import NIOCore
import NIOSSL

/// How to reach the push providers: APNs (URL and provider key), Web Push (the VAPID key), any
/// extra certificate authority to trust (the fake provider's), and each request's deadline.
package struct ProviderSettings: Sendable {
    package var apnsProductionURL = "https://api.push.apple.com"
    package var apnsSandboxURL = "https://api.sandbox.push.apple.com"
    /// The `.p8` provider key with its key id and team id; without them there is no APNs channel
    /// (APNs deliveries wait in the outbox).
    package var apnsKey: P256.Signing.PrivateKey?
    package var apnsKeyID = ""
    package var apnsTeamID = ""
    /// The apps the operator declared (`--apps FILE`): several apps on one server, each its
    /// bundle id (the topic), its default environment, and its own key when it is another team's.
    package var apps: [APNsApp] = []
    package var vapidKey: P256.Signing.PrivateKey
    package var vapidSubject = "mailto:operator@localhost"
    /// Certificate authorities (PEM) trusted besides the system's.
    package var extraCertificateAuthorities: [String] = []
    package var requestTimeout = TimeAmount.seconds(10)
    /// How long after its moment an alert is still worth sending (by the pipeline's clock): its
    /// `apns-expiration` and Web Push `TTL`, and no retry after it.
    package var staleAfter = ProviderSettings.defaultStaleAfter
    /// The retry policy's (30 minutes).
    package static let defaultStaleAfter = RetryPolicy().staleAfter
    /// How APNs requests travel: the lean HTTP/2 client (default) or AsyncHTTPClient.
    package var apnsTransport = TransportChoice.http2
    /// HTTP/2 connections per APNs host (lean client only). nio-http2 looks streams up by a linear
    /// scan, so 600 requests in flight cost less spread over 8 connections than over 4.
    package var apnsConnections = 8
    /// Whether the apps' Live Activities get broadcast channels (iOS 18): made, broadcast on and
    /// named in push-to-start. Off, each activity is updated by its own token, and the channels
    /// made while it was on are deleted after their games (they are still broadcast on until then).
    package var broadcast = true
    /// How Web Push requests travel: the lean HTTP/2 client, a pool per push service (default;
    /// a service without HTTP/2 is reached over HTTP/1.1), or HTTP/1.1 for all.
    package var webPushTransport = WebPushTransport.http2
    /// HTTP/2 connections per push service (lean client only).
    package var webPushConnections = 2
    package var writeConsole: @Sendable (String) -> Void = { print($0) }
    /// Resolves and checks the addresses of the endpoints users give (webhooks, push services).
    package var endpointGuard = EndpointGuard()

    package init(vapidKey: P256.Signing.PrivateKey) {
        self.vapidKey = vapidKey
    }
}

/// An app the server sends to: its id (what a device registers for), bundle id (the APNs topic),
/// the environment a device gets when it does not say, and a provider key of its own when the app
/// is another team's (else the server-wide key signs its pushes).
package struct APNsApp: Sendable {
    package var id: String
    package var topic: String
    package var environment: APNsEnvironment
    package var key: P256.Signing.PrivateKey?
    package var keyID: String
    package var teamID: String
    /// The origin of the app's web page (`https://scored.example.com`), when it has one on another
    /// origin than this server: its page may register Web Push subscriptions and read
    /// `/api/config` across origins (CORS), which others' pages may not.
    package var webOrigin: String?

    package init(
        id: String, topic: String, environment: APNsEnvironment, key: P256.Signing.PrivateKey? = nil,
        keyID: String = "", teamID: String = "", webOrigin: String? = nil
    ) {
        self.id = id
        self.topic = topic
        self.environment = environment
        self.key = key
        self.keyID = keyID
        self.teamID = teamID
        self.webOrigin = webOrigin
    }
}

/// How APNs requests travel.
package enum TransportChoice: String, Sendable, CaseIterable {
    case http2
    case asyncHTTPClient = "async-http-client"
}

/// How Web Push requests travel. Not over AsyncHTTPClient: it connects to whatever a name
/// resolves to and follows redirects, and a push endpoint is the user's URL.
package enum WebPushTransport: String, Sendable, CaseIterable {
    case http2
    case http1
}

/// The delivery channels built from settings, over one HTTP client.
package struct ProviderChannels: Sendable {
    package let client: HTTPClient
    package let channels: [any DeliveryChannel]
    /// Channels that could not be built, and why (e.g. no APNs key).
    package let unavailable: [ChannelKind: String]
    private let apnsTransport: (any APNsTransport)?
    private let webPushOrigins: WebPushOrigins?
    /// Broadcast channel management, per app and environment (with an APNs key).
    package let broadcastClients: BroadcastClients?

    package init(_ settings: ProviderSettings, clock: any WallClock = SystemWallClock()) throws {
        var tls = TLSConfiguration.makeClientConfiguration()
        if !settings.extraCertificateAuthorities.isEmpty {
            let certificates = try settings.extraCertificateAuthorities.flatMap {
                try NIOSSLCertificate.fromPEMBytes(Array($0.utf8))
            }
            tls.additionalTrustRoots = [.certificates(certificates)]
        }
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls)
        configuration.httpVersion = .automatic
        configuration.timeout = .init(connect: .seconds(5))
        configuration.decompression = .disabled
        // Only APNs (a fixed host) travels over this client; nothing it talks to is followed
        // elsewhere.
        configuration.redirectConfiguration = .disallow
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        self.client = client
        do {
            (channels, unavailable, apnsTransport, webPushOrigins, broadcastClients) = try Self.channels(
                settings, client: client, clock: clock)
        } catch {
            // A client dropped without shutdown traps in its deinit.
            try? client.syncShutdown()
            throw error
        }
    }

    /// What a push-to-start reads at send time: the service's clock, and the channels kept (none
    /// to wait for when broadcast is off).
    static func starts(_ kept: BroadcastClients?, clock: any WallClock) -> APNsChannel.StartChannels {
        var starts = APNsChannel.StartChannels(channel: { kept?.channel(for: $0) }, now: { clock.now() })
        if kept == nil { starts.wait = 0 }
        return starts
    }

    private static func channels(_ settings: ProviderSettings, client: HTTPClient, clock: any WallClock) throws -> (
        [any DeliveryChannel], [ChannelKind: String], (any APNsTransport)?, WebPushOrigins?, BroadcastClients?
    ) {
        let apnsTransport: (any APNsTransport)?
        var broadcastClients: BroadcastClients?
        let webPushOrigins: WebPushOrigins?
        var channels: [any DeliveryChannel] = []
        var unavailable: [ChannelKind: String] = [:]
        let serverKey = settings.apnsKey.flatMap { key in
            !settings.apnsKeyID.isEmpty && !settings.apnsTeamID.isEmpty ? key : nil
        }
        let appKeys = settings.apps.filter { $0.key != nil }
        if serverKey != nil || !appKeys.isEmpty {
            let apns = APNsConfiguration(
                productionURL: settings.apnsProductionURL, sandboxURL: settings.apnsSandboxURL,
                timeout: settings.requestTimeout)
            // One provider token per key for both channels: refreshed once per key, not per channel.
            let token = serverKey.map {
                APNsProviderToken(
                    key: $0, keyID: settings.apnsKeyID, teamID: settings.apnsTeamID, clock: SystemWallClock())
            }
            var tokensByTopic: [String: APNsProviderToken] = [:]
            for app in appKeys {
                if let key = app.key {
                    tokensByTopic[app.topic] = APNsProviderToken(
                        key: key, keyID: app.keyID, teamID: app.teamID, clock: SystemWallClock())
                }
            }
            let transport: any APNsTransport
            switch settings.apnsTransport {
            case .http2:
                var options = HTTP2Client.Configuration()
                options.connections = max(1, settings.apnsConnections)
                options.extraCertificateAuthorities = settings.extraCertificateAuthorities
                transport = try HTTP2APNsTransport(configuration: apns, client: options)
            case .asyncHTTPClient:
                transport = AsyncHTTPClientAPNsTransport(client: client, configuration: apns)
            }
            apnsTransport = transport
            var management = HTTP2Client.Configuration()
            management.extraCertificateAuthorities = settings.extraCertificateAuthorities
            let (pushURLs, timeout) = (
                [APNsEnvironment.production: settings.apnsProductionURL, .sandbox: settings.apnsSandboxURL],
                settings.requestTimeout
            )
            // Made whatever `broadcast` says: turned off, no channel is made, but those made
            // before are still deleted after their games (``BroadcastChannels/Settings/makesChannels``).
            broadcastClients = BroadcastClients { [tokensByTopic, management] app in
                guard let pushURL = pushURLs[app.environment], let signer = tokensByTopic[app.topic] ?? token else {
                    return nil
                }
                return try APNsBroadcastClient(
                    managementURL: BroadcastClients.managementURL(pushURL: pushURL, environment: app.environment),
                    broadcastURL: pushURL, bundleID: app.topic, token: signer, timeout: timeout, client: management)
            }
            let declared = Set(settings.apps.map(\.topic))
            channels.append(
                APNsChannel(
                    kind: .apns, transport: transport, token: token, tokensByTopic: tokensByTopic,
                    declaredTopics: declared))
            for kind in [ChannelKind.liveActivity, .liveActivityChannel] {
                channels.append(
                    APNsChannel(
                        kind: kind, transport: transport, token: token, tokensByTopic: tokensByTopic,
                        declaredTopics: declared))
            }
            // A push-to-start names the bid's broadcast channel, as the channels' last round found it
            // (without channels, it asks for the activity's own token).
            channels.append(
                APNsChannel(
                    kind: .liveActivityStart, transport: transport, token: token, tokensByTopic: tokensByTopic,
                    declaredTopics: declared,
                    starts: Self.starts(settings.broadcast ? broadcastClients : nil, clock: clock)))
        } else {
            apnsTransport = nil
            let reason = "no APNs provider key (with key id and team id) configured"
            unavailable[.apns] = reason
            unavailable[.liveActivity] = reason
            unavailable[.liveActivityChannel] = reason
            unavailable[.liveActivityStart] = reason
        }
        switch settings.webPushTransport {
        case .http2:
            var options = HTTP2Client.Configuration()
            options.connections = max(1, settings.webPushConnections)
            options.extraCertificateAuthorities = settings.extraCertificateAuthorities
            options.endpointGuard = settings.endpointGuard
            // A client is closed once unused for well over a request's deadline.
            let deadline = Double(settings.requestTimeout.nanoseconds) / 1e9
            webPushOrigins = WebPushOrigins(configuration: options, idleAfter: max(120, 4 * deadline))
        case .http1:
            webPushOrigins = nil
        }
        var http1 = HTTP1Client.Configuration()
        http1.extraCertificateAuthorities = settings.extraCertificateAuthorities
        http1.endpointGuard = settings.endpointGuard
        let endpoints = try HTTP1Client(configuration: http1)
        channels.append(
            WebPushChannel(
                client: endpoints, vapid: VAPID(key: settings.vapidKey, subject: settings.vapidSubject),
                clock: SystemWallClock(), timeout: settings.requestTimeout, origins: webPushOrigins))
        channels.append(WebhookChannel(client: endpoints, clock: SystemWallClock(), timeout: settings.requestTimeout))
        channels.append(ConsoleChannel(write: settings.writeConsole))
        return (channels, unavailable, apnsTransport, webPushOrigins, broadcastClients)
    }

    package func shutdown() async throws {
        await apnsTransport?.shutdown()
        await broadcastClients?.shutdown()
        await webPushOrigins?.shutdown()
        try await client.shutdown()
    }
}

/// Reading and keeping the keys the service signs with.
package enum KeyFiles {
    package struct Failure: Error, CustomStringConvertible {
        package var path: String
        package var reason: String
        package var description: String { "\(path): \(reason)" }

        package init(path: String, reason: String) {
            self.path = path
            self.reason = reason
        }
    }

    /// An ES256 private key from a PEM file (an APNs `.p8`, PKCS#8, or SEC1).
    package static func readSigningKey(_ path: String) throws(Failure) -> P256.Signing.PrivateKey {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw Failure(path: path, reason: whyUnreadable(path))
        }
        do {
            return try P256.Signing.PrivateKey(pemRepresentation: String(decoding: data, as: UTF8.self))
        } catch {
            throw Failure(path: path, reason: "is not a PEM P-256 private key (an APNs .p8 key is one)")
        }
    }

    /// Why a file cannot be read: not there, a folder, or not readable by this user (and who may).
    static func whyUnreadable(_ path: String) -> String {
        var isDirectory: ObjCBool = false
        let files = FileManager.default
        guard files.fileExists(atPath: path, isDirectory: &isDirectory) else {
            return path.hasPrefix("/") ? "does not exist" : "does not exist (from \(files.currentDirectoryPath))"
        }
        if isDirectory.boolValue { return "is a folder, not a file" }
        if !files.isReadableFile(atPath: path) {
            let attributes = try? files.attributesOfItem(atPath: path)
            let owner = attributes?[.ownerAccountName] as? String ?? "another user"
            let mode = (attributes?[.posixPermissions] as? Int).map { String($0, radix: 8) } ?? "?"
            return "cannot be read by this user (it belongs to \(owner), mode \(mode))"
        }
        return "cannot be read"
    }

    /// The key in `path`, or a new one written there (mode 0600) when the file does not exist.
    package static func signingKey(at path: String) throws(Failure) -> (key: P256.Signing.PrivateKey, created: Bool) {
        if FileManager.default.fileExists(atPath: path) { return (try readSigningKey(path), false) }
        let key = P256.Signing.PrivateKey()
        try write(key, to: path)
        return (key, true)
    }

    /// Writes a new key (0600; its directory, when made, 0700).
    package static func write(_ key: P256.Signing.PrivateKey, to path: String) throws(Failure) {
        let directory = (path as NSString).deletingLastPathComponent
        do {
            if !directory.isEmpty {
                try FileManager.default.createDirectory(
                    atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            }
            guard
                FileManager.default.createFile(
                    atPath: path, contents: Data(key.pemRepresentation.utf8), attributes: [.posixPermissions: 0o600])
            else { throw Failure(path: path, reason: "cannot be written") }
        } catch let failure as Failure {
            throw failure
        } catch {
            throw Failure(path: path, reason: "cannot be written: \(error.localizedDescription)")
        }
    }

    /// A text file, or a clear error.
    package static func readText(_ path: String) throws(Failure) -> String {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw Failure(path: path, reason: whyUnreadable(path))
        }
        return String(decoding: data, as: UTF8.self)
    }
}
