import Crypto
import Foundation

/// JSON Web Tokens signed with ES256 (ECDSA P-256, SHA-256), the signature as raw r‖s: what APNs
/// provider tokens and VAPID use.
package enum ES256JWT {
    /// Signs `header` and `claims` (already JSON).
    package static func sign(header: String, claims: String, key: P256.Signing.PrivateKey) throws -> String {
        let input = Base64URL.encode(Data(header.utf8)) + "." + Base64URL.encode(Data(claims.utf8))
        let signature = try key.signature(for: Data(input.utf8))
        return input + "." + Base64URL.encode(signature.rawRepresentation)
    }

    package struct Decoded: Sendable {
        package var header: [String: any Sendable]
        package var claims: [String: any Sendable]
    }

    package enum VerificationError: Error, Equatable, CustomStringConvertible {
        case malformed
        case badSignature
        case unsupportedAlgorithm

        package var description: String {
            switch self {
            case .malformed: "the token is not three base64url parts of JSON"
            case .badSignature: "the signature does not verify"
            case .unsupportedAlgorithm: "the algorithm is not ES256"
            }
        }
    }

    /// Verifies `token` against `key` and returns its header and claims.
    package static func verify(_ token: String, key: P256.Signing.PublicKey) throws(VerificationError) -> Decoded {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerData = Base64URL.decode(String(parts[0])),
            let claimsData = Base64URL.decode(String(parts[1])), let signatureData = Base64URL.decode(String(parts[2])),
            let header = (try? JSONSerialization.jsonObject(with: headerData)) as? [String: Any],
            let claims = (try? JSONSerialization.jsonObject(with: claimsData)) as? [String: Any]
        else { throw .malformed }
        guard header["alg"] as? String == "ES256" else { throw .unsupportedAlgorithm }
        guard let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureData),
            key.isValidSignature(signature, for: Data("\(parts[0]).\(parts[1])".utf8))
        else { throw .badSignature }
        return Decoded(header: header.mapValues { "\($0)" as any Sendable }, claims: claims.compactMapValues(sendable))
    }

    private static func sendable(_ value: Any) -> (any Sendable)? {
        switch value {
        case let number as NSNumber: number.intValue
        case let string as String: string
        default: "\(value)"
        }
    }

    /// JSON string literal for `text`.
    static func quote(_ text: String) -> String {
        let data = try? JSONSerialization.data(withJSONObject: [text], options: [.withoutEscapingSlashes])
        let array = data.map { String(decoding: $0, as: UTF8.self) } ?? "[\"\"]"
        return String(array.dropFirst().dropLast())
    }
}
