import Crypto
import Foundation

/// Encrypts the secrets a store keeps for sending — webhook signing secrets, Web Push auth
/// secrets — with AES-GCM under a key kept apart from the database (a file of its own, 0600, or
/// given by the operator), so a copy of the database alone (a backup, a leaked file) does not give
/// them away. A stored secret reads `enc1:` and the base64 of nonce, ciphertext and tag; a value
/// without the prefix is one stored before encryption, read as it is (and encrypted when the
/// store opens).
package struct SecretBox: Sendable {
    private let key: SymmetricKey

    package static let prefix = "enc1:"

    package init(key: SymmetricKey) {
        self.key = key
    }

    /// A key of its own for one process (in-memory stores, tests).
    package static func ephemeral() -> SecretBox {
        SecretBox(key: SymmetricKey(size: .bits256))
    }

    /// The key in the file at `path` (32 bytes, base64), or a new one written there (mode 0600).
    package static func keyFile(at path: String) throws -> SecretBox {
        let manager = FileManager.default
        if let data = manager.contents(atPath: path) {
            let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            guard let bytes = Data(base64Encoded: text), bytes.count == 32 else {
                throw StoreError.corrupt("the secrets key \(path) is not 32 bytes in base64")
            }
            return SecretBox(key: SymmetricKey(data: bytes))
        }
        let key = SymmetricKey(size: .bits256)
        let text = key.withUnsafeBytes { Data($0).base64EncodedString() } + "\n"
        guard manager.createFile(atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600])
        else { throw StoreError.corrupt("cannot write the secrets key \(path)") }
        return SecretBox(key: key)
    }

    /// The key from its base64 text (an operator's environment variable).
    package static func key(base64 text: String) throws -> SecretBox {
        guard let bytes = Data(base64Encoded: text.trimmingCharacters(in: .whitespacesAndNewlines)),
            bytes.count == 32
        else { throw StoreError.corrupt("the secrets key is not 32 bytes in base64") }
        return SecretBox(key: SymmetricKey(data: bytes))
    }

    package func seal(_ secret: String) throws -> String {
        let box = try AES.GCM.seal(Data(secret.utf8), using: key)
        guard let combined = box.combined else { throw StoreError.corrupt("cannot seal a secret") }
        return Self.prefix + combined.base64EncodedString()
    }

    /// The secret in `stored`; a value from before encryption is returned as it is.
    package func open(_ stored: String) throws -> String {
        guard stored.hasPrefix(Self.prefix) else { return stored }
        guard let combined = Data(base64Encoded: String(stored.dropFirst(Self.prefix.count))),
            let box = try? AES.GCM.SealedBox(combined: combined),
            let plain = try? AES.GCM.open(box, using: key)
        else {
            throw StoreError.corrupt("a stored secret does not open with this key (is it the store's secrets key?)")
        }
        return String(decoding: plain, as: UTF8.self)
    }

    /// Whether `stored` is sealed.
    package static func isSealed(_ stored: String) -> Bool { stored.hasPrefix(prefix) }
}
