import Crypto
import Delivery
import Foundation
import TestSupport
import Testing

/// Published test vectors: RFC 8291 Appendix A, RFC 8292's example, Standard Webhooks.
@Suite struct CryptoVectorTests {
    static func vector(_ name: String) throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: Data(try TestData.bytes("vectors/\(name)"))) as! [String: Any]
    }

    static func bytes(_ vector: [String: Any], _ key: String) throws -> Data {
        try #require(Base64URL.decode(vector[key] as! String))
    }

    @Test func base64URLMatchesFoundationsBase64WithTheURLAlphabet() throws {
        func reference(_ data: Data) -> String {
            data.base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        }
        for length in 0..<70 {
            let data = Data((0..<length).map { _ in UInt8.random(in: 0...255) })
            let text = Base64URL.encode(data)
            #expect(text == reference(data))
            #expect(Base64URL.decode(text) == data)
            #expect(Base64URL.decode(data.base64EncodedString()) == data, "standard alphabet, padded")
        }
        #expect(Base64URL.decode("")?.isEmpty == true)
        #expect(Base64URL.decode("-_8=") == Data([0xFB, 0xFF]))
        for bad in ["a", "abcde", "ab=c", "ab===", "abc==", "a$bc", "ab c", "é"] {
            #expect(Base64URL.decode(bad) == nil, "\(bad)")
        }
    }

    @Test func webPushEncryptionReproducesRFC8291AppendixA() throws {
        let v = try Self.vector("webpush-rfc8291-appendix-a.json")
        let sender = try P256.KeyAgreement.PrivateKey(rawRepresentation: Self.bytes(v, "as_private"))
        #expect(sender.publicKey.x963Representation == (try Self.bytes(v, "as_public")))
        let body = try WebPushEncryption.encrypt(
            Self.bytes(v, "plaintext"), p256dh: Self.bytes(v, "ua_public"), auth: Self.bytes(v, "auth_secret"),
            senderKey: sender, salt: Self.bytes(v, "salt"))
        #expect(body == (try Self.bytes(v, "body")))
        #expect(body.count == 144)
        #expect(body.prefix(86) == (try Self.bytes(v, "header")))
    }

    @Test func webPushDecryptionRecoversTheRFCPlaintext() throws {
        let v = try Self.vector("webpush-rfc8291-appendix-a.json")
        let receiver = try P256.KeyAgreement.PrivateKey(rawRepresentation: Self.bytes(v, "ua_private"))
        let plaintext = try WebPushEncryption.decrypt(
            Self.bytes(v, "body"), receiverKey: receiver, auth: Self.bytes(v, "auth_secret"))
        #expect(String(decoding: plaintext, as: UTF8.self) == "When I grow up, I want to be a watermelon")
        var tampered = try Self.bytes(v, "body")
        tampered[100] ^= 1
        #expect(throws: WebPushEncryption.Failure.decryptionFailed) {
            try WebPushEncryption.decrypt(tampered, receiverKey: receiver, auth: Self.bytes(v, "auth_secret"))
        }
    }

    @Test func webPushRejectsBadKeysAndOversizePayloads() throws {
        let receiver = P256.KeyAgreement.PrivateKey()
        let p256dh = receiver.publicKey.x963Representation
        #expect(throws: WebPushEncryption.Failure.badSubscriptionKey) {
            try WebPushEncryption.encrypt(Data("x".utf8), p256dh: Data(repeating: 4, count: 65), auth: Data(count: 16))
        }
        #expect(throws: WebPushEncryption.Failure.badAuthSecret) {
            try WebPushEncryption.encrypt(Data("x".utf8), p256dh: p256dh, auth: Data(count: 15))
        }
        #expect(throws: WebPushEncryption.Failure.tooLarge(3994)) {
            try WebPushEncryption.encrypt(Data(count: 3994), p256dh: p256dh, auth: Data(count: 16))
        }
        let auth = Data((0..<16).map { UInt8($0) })
        let body = try WebPushEncryption.encrypt(Data(count: 3993), p256dh: p256dh, auth: auth)
        #expect(body.count == 4096)  // header 86 + plaintext 3993 + delimiter 1 + tag 16
        #expect(try WebPushEncryption.decrypt(body, receiverKey: receiver, auth: auth) == Data(count: 3993))
    }

    @Test func vapidExampleOfRFC8292Verifies() throws {
        let v = try Self.vector("vapid-rfc8292-example.json")
        let claims = try VAPID.verify(token: v["t"] as! String, key: v["k"] as! String)
        #expect(claims["aud"] as? String == "https://push.example.net")
        #expect(claims["sub"] as? String == "mailto:push@example.com")
        #expect(claims["exp"] as? Int == 1_453_523_768)
        // Another key does not verify it.
        let other = Base64URL.encode(P256.Signing.PrivateKey().publicKey.x963Representation)
        #expect(throws: ES256JWT.VerificationError.badSignature) {
            try VAPID.verify(token: v["t"] as! String, key: other)
        }
    }

    @Test func vapidAuthorizationWeSignVerifies() throws {
        let vapid = VAPID(key: P256.Signing.PrivateKey(), subject: "mailto:ops@example.org")
        let header = try vapid.authorization(
            endpoint: URL(string: "https://push.example.net:8443/p/abc")!,
            now: Date(timeIntervalSince1970: 1_700_000_000))
        let parsed = try #require(VAPID.parse(authorization: header))
        #expect(parsed.key == vapid.publicKeyBase64URL)
        let claims = try VAPID.verify(token: parsed.token, key: parsed.key)
        #expect(claims["aud"] as? String == "https://push.example.net:8443")
        #expect(claims["exp"] as? Int == 1_700_000_000 + 12 * 3600)
        #expect(claims["sub"] as? String == "mailto:ops@example.org")
    }

    @Test func vapidHeadersAreReusedPerPushServiceForAnHour() throws {
        let cache = VAPIDAuthorizations(vapid: VAPID(key: P256.Signing.PrivateKey(), subject: "mailto:ops@example.org"))
        let start = Date(timeIntervalSince1970: 1_700_000_000)
        // The audience as the channel derives it from a subscription's endpoint.
        func header(_ endpoint: String, at now: Date) throws -> String {
            try cache.authorization(audience: try #require(WebPushChannel.originAndPath(of: endpoint)).origin, now: now)
        }
        let endpoint = "https://push.example.net/p/abc"
        let first = try header(endpoint, at: start)
        // Another subscription on the same service, 59 minutes later: the same header, still valid 11 hours.
        #expect(try header("https://push.example.net/p/xyz", at: start + 3540) == first)
        // Another service gets its own audience.
        let other = try header("https://fcm.example.com/send/1", at: start)
        let otherClaims = try VAPID.verify(
            token: try #require(VAPID.parse(authorization: other)).token, key: cache.vapid.publicKeyBase64URL)
        #expect(otherClaims["aud"] as? String == "https://fcm.example.com")
        // After an hour: signed again, expiring 12 hours from then.
        let later = try header(endpoint, at: start + 3600)
        #expect(later != first)
        let claims = try VAPID.verify(
            token: try #require(VAPID.parse(authorization: later)).token, key: cache.vapid.publicKeyBase64URL)
        #expect(claims["exp"] as? Int == 1_700_000_000 + 3600 + 12 * 3600)
    }

    @Test func standardWebhooksSignatureMatchesThePublishedExample() throws {
        let v = try Self.vector("standard-webhooks.json")
        let key = try StandardWebhooks.key(fromSecret: v["secret"] as! String)
        let body = Data((v["body"] as! String).utf8)
        let signature = StandardWebhooks.signature(
            id: v["id"] as! String, timestamp: v["timestamp"] as! Int, body: body, key: key)
        #expect(signature == v["signature"] as! String)
        #expect(
            StandardWebhooks.verify(
                header: "v1,bad " + signature, id: v["id"] as! String, timestamp: v["timestamp"] as! Int, body: body,
                key: key))
        #expect(!StandardWebhooks.verify(header: signature, id: v["id"] as! String, timestamp: 1, body: body, key: key))
        #expect(throws: StandardWebhooks.SecretError.self) {
            try StandardWebhooks.key(fromSecret: "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
        }
    }
}
