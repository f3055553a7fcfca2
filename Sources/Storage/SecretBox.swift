import Crypto
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Creates `path` (0600) for writing, failing when it exists.
private func createExclusively(_ path: String) -> Int32 {
    #if canImport(Glibc)
        Glibc.open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
    #else
        Darwin.open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
    #endif
}

/// Opens a directory to sync it.
private func openDirectory(_ path: String) -> Int32 {
    #if canImport(Glibc)
        Glibc.open(path, O_RDONLY | O_DIRECTORY)
    #else
        Darwin.open(path, O_RDONLY | O_DIRECTORY)
    #endif
}

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
        if let existing = try existingKeyFile(at: path) { return existing }
        return try newKeyFile(at: path)
    }

    /// The key in the file at `path`, or nil when there is no such file.
    package static func existingKeyFile(at path: String) throws -> SecretBox? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let bytes = Data(base64Encoded: text), bytes.count == 32 else {
            throw StoreError.corrupt("the secrets key", key: path, reason: "not 32 bytes in base64")
        }
        return SecretBox(key: SymmetricKey(data: bytes))
    }

    /// A new key written to `path` (mode 0600); never over a file already there (a process
    /// started beside this one wrote it first: its key is the one used). The key is written to a
    /// file of its own and synced, then linked into place, so `path` never holds half a key and is
    /// on disk before any secret is sealed with it.
    package static func newKeyFile(at path: String) throws -> SecretBox {
        let key = SymmetricKey(size: .bits256)
        let bytes = Array((key.withUnsafeBytes { Data($0).base64EncodedString() } + "\n").utf8)
        let temporary = "\(path).\(UUID().uuidString.prefix(8)).tmp"
        func failure(_ what: String) -> StoreError {
            .corrupt("cannot write the secrets key \(path): \(what): \(String(cString: strerror(errno)))")
        }
        let descriptor = createExclusively(temporary)
        guard descriptor >= 0 else { throw failure("creating \(temporary)") }
        defer { unlink(temporary) }
        let written = write(descriptor, bytes, bytes.count)
        let synced = fsync(descriptor)
        close(descriptor)
        guard written == bytes.count, synced == 0 else { throw failure("writing \(temporary)") }
        guard link(temporary, path) == 0 else {
            if errno == EEXIST, let existing = try existingKeyFile(at: path) { return existing }
            throw failure("linking it into place")
        }
        // The new name on disk too.
        let folder = (path as NSString).deletingLastPathComponent
        let directory = openDirectory(folder.isEmpty ? "." : folder)
        if directory >= 0 {
            _ = fsync(directory)
            close(directory)
        }
        return SecretBox(key: key)
    }

    /// What a store says when its secrets key is missing but it holds secrets sealed with one:
    /// a new key could not open them, so none is made.
    package static func missingKey(_ path: String, sealed: Int, database: String) -> StoreError {
        .configuration(
            "the secrets key \(path) is missing, but the database \(database) holds \(sealed) secret"
                + (sealed == 1 ? "" : "s")
                + " sealed with it (webhook signing and Web Push secrets): restore the key from your backup "
                + "(or give its place with --secrets-key); nohit makes no new key, which could not open them")
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
