import Alerts
import Clocks
import Delivery
import Foundation
import Logging
import Pipeline
import Storage

/// The delivery channels and the feedback hook, made once the database is recovered from an
/// unclean stop; each provider said ready (or why not) at every start.
package struct DeliverySetup: Sendable {
    /// None when the settings name no providers.
    var channels: ProviderChannels?
    var feedback: FeedbackHook?

    static func prepare(
        _ delivery: ServiceSettings.Delivery, store: any ServiceStore, clock: any WallClock,
        notice: @Sendable (String) -> Void, logger: Logger
    ) async throws -> DeliverySetup {
        var setup = DeliverySetup()
        if let providers = delivery.providers, let path = delivery.newVAPIDKeyFile {
            // Like the secrets key: a new VAPID key beside subscriptions made with the old one
            // would leave every one of those browsers silently without alerts.
            let subscribed = try await store.activeDevices().count { $0.channel.kind == .webPush }
            guard subscribed == 0 else {
                throw StartError(
                    "the Web Push VAPID key \(path) is missing, and \(subscribed) active Web Push "
                        + "subscription\(subscribed == 1 ? " was" : "s were") made with it: restore it from your backup "
                        + "(nohit backup keeps it), or give its file with --vapid-key (NOHIT_VAPID_KEY); a new key "
                        + "would leave those browsers without alerts. To start over on purpose (each of them must "
                        + "subscribe again), make one with openssl ecparam -name prime256v1 -genkey -noout -out FILE "
                        + "and give it with --vapid-key")
            }
            try KeyFiles.write(providers.vapidKey, to: path)
            notice(
                "first start: created \(path) (the Web Push VAPID key): back it up and never replace it; browsers' "
                    + "subscriptions are bound to it, and a new key means every Web Push user subscribes again")
        }
        if let providers = delivery.providers {
            // Before the channels: nothing to shut down when the hook's settings are wrong.
            setup.feedback = try delivery.feedback.map {
                try feedbackHook($0, providers: providers, store: store, logger: logger)
            }
            let channels = try ProviderChannels(providers, clock: clock)
            setup.channels = channels
            for (line, ready) in readiness(providers, unavailable: channels.unavailable) {
                if ready { logger.notice("\(line)") } else { logger.warning("\(line)") }
            }
        }
        let recovery: RecoveryReport
        let released: Int
        do {
            // SQLite: every attempt left unfinished; PostgreSQL: those whose instance's lease lapsed.
            recovery = try await store.recoverInDoubt(now: clock.now())
            // Held for a configuration a provider refused: this start's may be mended.
            released = try await store.releaseHeld(now: clock.now())
        } catch {
            await setup.channels?.close(logger: logger)
            throw error
        }
        if !recovery.requeued.isEmpty || !recovery.superseded.isEmpty {
            notice(
                "recovered after an unclean stop: \(recovery.requeued.count) in-doubt alerts queued again, "
                    + "\(recovery.superseded.count) superseded by later alerts")
        }
        if released > 0 {
            notice(
                "\(released) deliveries held for a configuration a provider refused are sent again (if it is not "
                    + "mended, they are held again and the log says why)")
        }
        if let feedback = setup.feedback {
            logger.notice("feedback hook ready: every pruned device is told to \(feedback.url)")
        }
        return setup
    }

    /// The operator's feedback hook. Its URL is the operator's: reached on loopback too, with the
    /// providers' extra certificate authorities.
    static func feedbackHook(
        _ feedback: ServiceSettings.Feedback, providers: ProviderSettings, store: any FeedbackStore, logger: Logger
    ) throws -> FeedbackHook {
        guard let target = HTTP1Client.Target(url: feedback.url) else {
            throw StartError("feedback.url (--feedback-url) must be an https URL, not '\(feedback.url)'")
        }
        var configuration = HTTP1Client.Configuration()
        configuration.extraCertificateAuthorities = providers.extraCertificateAuthorities
        configuration.endpointGuard = providers.endpointGuard
        configuration.endpointGuard.trusted.insert(EndpointGuard.Endpoint(host: target.host, port: target.port))
        do {
            return try FeedbackHook(
                store: store, url: feedback.url, secret: feedback.secret,
                client: try HTTP1Client(configuration: configuration), clock: SystemWallClock(), logger: logger)
        } catch let error as StandardWebhooks.SecretError {
            throw StartError("feedback.secret: \(error)")
        }
    }

    /// One line per provider saying it is ready, and with what (or why not): at every start, so
    /// that an operator sees the APNs key, team and hosts in use before the first alert.
    package static func readiness(_ settings: ProviderSettings, unavailable: [ChannelKind: String]) -> [(
        String, ready: Bool
    )] {
        var lines: [(String, ready: Bool)] = []
        let hasServerKey = settings.apnsKey != nil && !settings.apnsKeyID.isEmpty && !settings.apnsTeamID.isEmpty
        if let reason = unavailable[.apns] {
            lines.append(
                (
                    "APNs not ready: \(reason) (--apns-key, --apns-key-id, --apns-team-id; or --fake-apns DIR): "
                        + "APNs and Live Activity alerts wait in the outbox", false
                ))
        } else {
            let hosts =
                settings.apnsProductionURL == settings.apnsSandboxURL
                ? "both environments at \(settings.apnsProductionURL)"
                : "production at \(settings.apnsProductionURL), sandbox at \(settings.apnsSandboxURL)"
            let signer =
                hasServerKey
                ? "key id \(settings.apnsKeyID), team \(settings.apnsTeamID)"
                : "for the apps with keys of their own only (no server-wide key)"
            lines.append(
                (
                    "APNs ready: \(signer), \(hosts); each device's topic (its app's bundle id) and environment as "
                        + "registered", true
                ))
            lines.append(
                (
                    settings.broadcast
                        ? "Live Activities: broadcast channels on (iOS 18; apns.broadcast), push-to-start paced per device"
                        : "Live Activities: broadcast channels off (apns.broadcast), each activity updated by its own "
                            + "token, push-to-start asks for it; channels made before are deleted after their games",
                    true
                ))
        }
        for app in settings.apps {
            let signed = app.key != nil || hasServerKey
            let signer =
                app.key != nil
                ? "its own key id \(app.keyID), team \(app.teamID)"
                : hasServerKey
                    ? "the server's key"
                    : "no key, so its alerts cannot be signed: declare one for it, or a server-wide one"
            lines.append(
                ("APNs app \(app.id) (\(app.topic)): \(signer); devices default to \(app.environment.rawValue)", signed)
            )
        }
        lines.append(
            (
                "Web Push ready: VAPID subject \(settings.vapidSubject), public key "
                    + VAPID(key: settings.vapidKey, subject: settings.vapidSubject).publicKeyBase64URL, true
            ))
        lines.append(
            (
                "webhooks ready: signed as Standard Webhooks"
                    + (settings.endpointGuard.allowPrivateNetworks ? ", private networks allowed" : ""), true
            ))
        return lines
    }
}

extension ProviderChannels {
    /// Shuts the channels down; a failure to is logged (the service is stopping either way).
    func close(logger: Logger) async {
        do {
            try await shutdown()
        } catch {
            logger.warning("the delivery channels did not shut down cleanly", metadata: ["error": "\(error)"])
        }
    }
}
