import Crypto
import Foundation

/// Signatures of the Standard Webhooks specification: `webhook-signature: v1,<base64 of
/// HMAC-SHA256(secret, "<id>.<timestamp>.<body>")>`, the secret being the base64 after `whsec_`.
package enum StandardWebhooks {
    package struct SecretError: Error, CustomStringConvertible {
        package var description: String { "a webhook secret is 'whsec_' followed by base64 (at least 24 bytes)" }
    }

    /// The key bytes of a `whsec_...` secret.
    package static func key(fromSecret secret: String) throws(SecretError) -> SymmetricKey {
        guard secret.hasPrefix("whsec_"), let bytes = Data(base64Encoded: String(secret.dropFirst(6))),
            bytes.count >= 24
        else { throw SecretError() }
        return SymmetricKey(data: bytes)
    }

    /// A fresh random secret.
    package static func newSecret() -> String {
        "whsec_" + Data(SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) }).base64EncodedString()
    }

    /// The `webhook-signature` header value.
    package static func signature(id: String, timestamp: Int, body: Data, key: SymmetricKey) -> String {
        var signed = Data("\(id).\(timestamp).".utf8)
        signed.append(body)
        let mac = HMAC<SHA256>.authenticationCode(for: signed, using: key)
        return "v1," + Data(mac).base64EncodedString()
    }

    /// Whether one of the space-separated signatures in `header` matches (constant-time compare).
    package static func verify(header: String, id: String, timestamp: Int, body: Data, key: SymmetricKey) -> Bool {
        var signed = Data("\(id).\(timestamp).".utf8)
        signed.append(body)
        for candidate in header.split(separator: " ") where candidate.hasPrefix("v1,") {
            if let mac = Data(base64Encoded: String(candidate.dropFirst(3))),
                HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: signed, using: key)
            {
                return true
            }
        }
        return false
    }
}
