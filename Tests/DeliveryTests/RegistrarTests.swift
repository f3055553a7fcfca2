import Alerts
import Delivery
import Foundation
import TestSupport
import Testing

/// Registration refuses what could never be delivered, or should never be called, before
/// anything is stored.
struct RegistrarTests {
    static let now = Date(timeIntervalSince1970: 1_598_000_000)
    static let token = String(repeating: "ab", count: 32)

    /// The RFC 8291 Appendix A subscriber: a real browser's key and auth secret.
    static func rfcSubscriber() throws -> (p256dh: String, auth: String) {
        let json = try JSONSerialization.jsonObject(
            with: Data(contentsOf: URL(fileURLWithPath: TestData.path("vectors/webpush-rfc8291-appendix-a.json"))))
        let vector = try #require(json as? [String: Any])
        return (try #require(vector["ua_public"] as? String), try #require(vector["auth_secret"] as? String))
    }

    func refusal(_ channel: DeviceChannel, allowPrivate: Bool = false) -> RegistrationError? {
        do {
            _ = try Registrar(allowPrivateNetworks: allowPrivate).register(
                RegistrationRequest(channel: channel), at: Self.now)
            return nil
        } catch {
            return error
        }
    }

    @Test func wellFormedDevicesRegisterWithASecretOnlyTheirHashIsKept() throws {
        let subscriber = try Self.rfcSubscriber()
        let channels: [DeviceChannel] = [
            .apns(token: Self.token.uppercased(), environment: .production, topic: "com.example.nohit"),
            .liveActivity(token: Self.token, environment: .sandbox, topic: "com.example.nohit"),
            .webPush(endpoint: "https://push.example.net/send/abc", p256dh: subscriber.p256dh, auth: subscriber.auth),
            .webhook(url: "https://hooks.example.org/nohit", secret: ""),
            .console(label: "demo"),
        ]
        for channel in channels {
            let registration = try Registrar().register(RegistrationRequest(channel: channel), at: Self.now)
            #expect(registration.device.secretHash != registration.secret)
            #expect(registration.device.secretHash.count == 64)
            #expect(Registrar.verify(secret: registration.secret, of: registration.device))
            #expect(!Registrar.verify(secret: registration.secret + "x", of: registration.device))
            #expect(registration.device.registeredAt == Self.now)
        }
        // Tokens are stored lower-case; a webhook without a secret gets a fresh one.
        let apns = try Registrar().register(RegistrationRequest(channel: channels[0]), at: Self.now)
        #expect(apns.device.channel == .apns(token: Self.token, environment: .production, topic: "com.example.nohit"))
        let hook = try Registrar().register(RegistrationRequest(channel: channels[3]), at: Self.now)
        guard case .webhook(_, let secret) = hook.device.channel else { Issue.record("not a webhook"); return }
        #expect(secret.hasPrefix("whsec_"))
    }

    @Test func malformedTokensAreRefused() {
        let cases: [(String, String)] = [
            ("zz" + String(Self.token.dropFirst(2)), "hexadecimal"),
            (String(Self.token.dropLast()), "hex digits"),
            ("abcd", "hex digits"),
            ("", "hex digits"),
        ]
        for (token, reason) in cases {
            let error = refusal(.apns(token: token, environment: .sandbox, topic: "com.example.nohit"))
            #expect(error?.field == "token")
            #expect(error?.reason.contains(reason) == true, "\(token): \(String(describing: error))")
        }
        for topic in ["", "nohit", "com..nohit", "com.example.no hit", "com.example.nohit."] {
            #expect(refusal(.liveActivity(token: Self.token, environment: .sandbox, topic: topic))?.field == "topic")
        }
    }

    @Test func malformedSubscriptionsAreRefused() throws {
        let subscriber = try Self.rfcSubscriber()
        let endpoint = "https://push.example.net/send/abc"
        #expect(
            refusal(.webPush(endpoint: "http://push.example.net/x", p256dh: subscriber.p256dh, auth: subscriber.auth))?
                .field == "endpoint")
        #expect(
            refusal(.webPush(endpoint: "not a url", p256dh: subscriber.p256dh, auth: subscriber.auth))?.field
                == "endpoint")
        #expect(
            refusal(.webPush(endpoint: endpoint, p256dh: "!!", auth: subscriber.auth))?.reason == "is not base64url")
        // 65 bytes starting 0x04 but not a point on the curve.
        let offCurve = Base64URL.encode([4] + [UInt8](repeating: 1, count: 64))
        #expect(refusal(.webPush(endpoint: endpoint, p256dh: offCurve, auth: subscriber.auth))?.field == "p256dh")
        let short = Base64URL.encode([UInt8](repeating: 1, count: 15))
        #expect(
            refusal(.webPush(endpoint: endpoint, p256dh: subscriber.p256dh, auth: short))?.reason
                == "must be 16 bytes, not 15")
    }

    @Test func webhooksIntoInternalNetworksNeedTheOperatorsPermission() {
        let internalURLs = [
            "https://localhost/hook", "https://127.0.0.1:8443/hook", "https://10.1.2.3/hook", "https://172.20.0.1/hook",
            "https://192.168.1.10/hook", "https://169.254.169.254/latest/meta-data", "https://[::1]/hook",
            "https://[fd00::1]/hook", "https://[fe80::1]/hook", "https://[::ffff:10.0.0.1]/hook",
            "https://0.0.0.0/hook",
            "https://printer.local/hook", "https://intranet/hook", "https://100.64.0.1/hook",
            // The forms that hid internal addresses from a check of the text alone: what inet_aton
            // and the system resolver read them as is what is judged.
            "https://127.1/hook", "https://0177.0.0.1/hook", "https://0x7f.0.0.1/hook", "https://012.0.0.1/hook",
            "https://0251.0376.0251.0376/latest/meta-data", "https://169.254.43518/latest/meta-data",
            "https://2130706433/hook", "https://0x7f000001/hook", "https://[64:ff9b::7f00:1]/hook",
            "https://[64:ff9b::a9fe:a9fe]/hook", "https://[::ffff:7f00:1]/hook", "https://[::127.0.0.1]/hook",
            "https://[2002:7f00:1::]/hook", "https://[fe80::1%25eth0]/hook", "https://localhost./hook",
            "https://LOCALHOST/hook", "https://a.localhost/hook", "https://198.18.0.1/hook",
            "https://224.0.0.1/hook", "https://255.255.255.255/hook", "https://[ff02::1]/hook",
            "https://router.home.arpa/hook", "https://256.1.1.1/hook", "https://1.2.3.4.5/hook",
            "https://08.1.1.1/hook", "https://0x08.8.8.8/hook", "https://8.8.8.010/hook",
        ]
        for url in internalURLs {
            let error = refusal(.webhook(url: url, secret: ""))
            #expect(error?.field == "url", "\(url)")
            #expect(error?.reason.contains("operator has not allowed") == true, "\(url): \(String(describing: error))")
            #expect(error?.refusedByPolicy == true, "\(url)")
            #expect(refusal(.webhook(url: url, secret: ""), allowPrivate: true) == nil, "\(url)")
        }
        for url in [
            "https://hooks.example.org/x", "https://8.8.8.8/x", "https://172.32.0.1/x", "https://[2606:4700::1111]/x",
            "https://hooks.example.org./x", "https://[64:ff9b::808:808]/x",
        ] {
            #expect(refusal(.webhook(url: url, secret: "")) == nil, "\(url)")
        }
        #expect(refusal(.webhook(url: "https://user:pw@hooks.example.org/x", secret: ""))?.field == "url")
        #expect(
            refusal(.webhook(url: "ftp://hooks.example.org/x", secret: ""))?.reason.hasPrefix("must be an https URL")
                == true)
        // Characters no URL takes, and a half escape, are refused as malformed, not as policy.
        for url in [
            "https://hooks.example.org/a{b}", "https://hooks.example.org/%zz", "https://hooks.example.org/#a#b",
        ] {
            let error = refusal(.webhook(url: url, secret: ""), allowPrivate: true)
            #expect(error?.reason.hasPrefix("is not a URL this service takes") == true, "\(url)")
            #expect(error?.refusedByPolicy == false)
        }
        #expect(refusal(.webhook(url: "https://hooks.example.org/x", secret: "whsec_short"))?.field == "secret")
    }

    @Test func invalidPreferencesAreRefusedByField() {
        var preferences = Preferences()
        preferences.spoilerDelaySeconds = 500
        do {
            _ = try Registrar().register(
                RegistrationRequest(channel: .console(label: "x"), preferences: preferences), at: Self.now)
            Issue.record("registered")
        } catch {
            #expect(error.field.hasPrefix("preferences."))
        }
    }
}
