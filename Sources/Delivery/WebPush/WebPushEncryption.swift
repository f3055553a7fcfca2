import Crypto
import Foundation

/// Message encryption for Web Push (RFC 8291) with the aes128gcm content coding (RFC 8188): one
/// record, the sender's public key in the header.
package enum WebPushEncryption {
    /// The plaintext fits one 4096-byte record: 4096 - 16 (tag) - 1 (delimiter) - 86 (header).
    package static let maximumPlaintext = 3993
    static let recordSize: UInt32 = 4096

    package enum Failure: Error, Equatable, CustomStringConvertible {
        case badSubscriptionKey
        case badAuthSecret
        case tooLarge(Int)
        case malformedBody
        case decryptionFailed

        package var description: String {
            switch self {
            case .badSubscriptionKey: "p256dh is not an uncompressed P-256 public key (65 bytes, base64url)"
            case .badAuthSecret: "auth is not a 16-byte secret (base64url)"
            case .tooLarge(let count): "payload of \(count) bytes is over the \(maximumPlaintext)-byte limit"
            case .malformedBody: "the body is not an aes128gcm record with a 65-byte key id"
            case .decryptionFailed: "the record does not decrypt with this subscription's keys"
            }
        }
    }

    /// A fresh key pair for one message, from 32 random bytes. `P256.KeyAgreement.PrivateKey()`
    /// also runs BoringSSL's FIPS pairwise test (an ECDSA signature and its verification), which
    /// more than doubled the elliptic-curve work of every Web Push message; a key used for one
    /// ECDH and thrown away gains nothing from it. A scalar outside [1, n-1] (probability about
    /// 2⁻³²) is refused by BoringSSL and drawn again.
    package static func ephemeralKey() -> P256.KeyAgreement.PrivateKey {
        while true {
            let scalar = SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) }
            if let key = try? P256.KeyAgreement.PrivateKey(rawRepresentation: scalar) { return key }
        }
    }

    /// Encrypts `plaintext` for a subscription. `senderKey` and `salt` are fresh per message in
    /// real use; tests pass the RFC's.
    package static func encrypt(
        _ plaintext: Data, p256dh: Data, auth: Data, senderKey: P256.KeyAgreement.PrivateKey = ephemeralKey(),
        salt: Data = Data(SymmetricKey(size: .bits128).withUnsafeBytes { Array($0) })
    ) throws(Failure) -> Data {
        guard plaintext.count <= maximumPlaintext else { throw .tooLarge(plaintext.count) }
        guard let receiver = try? P256.KeyAgreement.PublicKey(x963Representation: p256dh) else {
            throw .badSubscriptionKey
        }
        guard auth.count == 16 else { throw .badAuthSecret }
        let senderPublic = senderKey.publicKey.x963Representation
        guard let shared = try? senderKey.sharedSecretFromKeyAgreement(with: receiver) else {
            throw .badSubscriptionKey
        }
        let (key, nonce) = contentKey(
            shared: shared, auth: auth, receiverPublic: p256dh, senderPublic: senderPublic, salt: salt)
        var padded = plaintext
        padded.append(0x02)
        guard let sealed = try? AES.GCM.seal(padded, using: key, nonce: nonce) else { throw .decryptionFailed }
        var body = header(salt: salt, keyID: senderPublic)
        body.append(sealed.ciphertext)
        body.append(sealed.tag)
        return body
    }

    /// Decrypts a body addressed to the subscription with `receiverKey` and `auth`: what a browser
    /// does (and `nohit fake-apns`'s Web Push endpoint).
    package static func decrypt(_ body: Data, receiverKey: P256.KeyAgreement.PrivateKey, auth: Data) throws(Failure)
        -> Data
    {
        let bytes = [UInt8](body)
        guard bytes.count >= 21 + 16 else { throw .malformedBody }
        let salt = Data(bytes[0..<16])
        let idLength = Int(bytes[20])
        guard idLength == 65, bytes.count >= 21 + 65 + 16 else { throw .malformedBody }
        let senderPublic = Data(bytes[21..<86])
        guard let sender = try? P256.KeyAgreement.PublicKey(x963Representation: senderPublic),
            let shared = try? receiverKey.sharedSecretFromKeyAgreement(with: sender)
        else { throw .malformedBody }
        let (key, nonce) = contentKey(
            shared: shared, auth: auth, receiverPublic: receiverKey.publicKey.x963Representation,
            senderPublic: senderPublic, salt: salt)
        let record = bytes[86...]
        guard record.count > 16,
            let box = try? AES.GCM.SealedBox(nonce: nonce, ciphertext: record.dropLast(16), tag: record.suffix(16)),
            let padded = try? AES.GCM.open(box, using: key)
        else { throw .decryptionFailed }
        guard let delimiter = padded.lastIndex(where: { $0 != 0 }), padded[delimiter] == 0x02 else {
            throw .decryptionFailed
        }
        return padded[padded.startIndex..<delimiter]
    }

    /// salt(16) ‖ rs(4) ‖ idlen(1) ‖ keyid(idlen).
    static func header(salt: Data, keyID: Data) -> Data {
        var header = salt
        withUnsafeBytes(of: recordSize.bigEndian) { header.append(contentsOf: $0) }
        header.append(UInt8(keyID.count))
        header.append(keyID)
        return header
    }

    /// RFC 8291 §3.4 then RFC 8188 §2.2: the input keying material from the ECDH secret and the
    /// auth secret, then the content-encryption key and nonce from the salt.
    static func contentKey(shared: SharedSecret, auth: Data, receiverPublic: Data, senderPublic: Data, salt: Data)
        -> (SymmetricKey, AES.GCM.Nonce)
    {
        var keyInfo = Data("WebPush: info".utf8)
        keyInfo.append(0)
        keyInfo.append(receiverPublic)
        keyInfo.append(senderPublic)
        let ikm = shared.hkdfDerivedSymmetricKey(
            using: SHA256.self, salt: auth, sharedInfo: keyInfo, outputByteCount: 32)
        let cek = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: ikm, salt: salt, info: Data("Content-Encoding: aes128gcm\0".utf8), outputByteCount: 16)
        let nonceKey = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: ikm, salt: salt, info: Data("Content-Encoding: nonce\0".utf8), outputByteCount: 12)
        let nonce = try! AES.GCM.Nonce(data: nonceKey.withUnsafeBytes { Data($0) })
        return (cek, nonce)
    }
}
