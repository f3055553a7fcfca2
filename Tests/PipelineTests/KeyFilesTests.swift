import Crypto
import Foundation
import Testing

@testable import Pipeline

/// A key file that cannot be used says why: not there (from where), a folder, not readable by
/// this user (whose it is), or not a key.
struct KeyFilesTests {
    @Test func anUnusableKeyFileSaysWhy() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("keyfiles-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        func reason(_ path: String) -> String {
            do {
                _ = try KeyFiles.readSigningKey(path)
                return "read"
            } catch {
                return "\(error)"
            }
        }
        let missing = folder.appendingPathComponent("AuthKey_ABCDE12345.p8").path
        #expect(reason(missing).hasSuffix("does not exist"))
        #expect(reason("no-such.p8").contains("does not exist (from \(FileManager.default.currentDirectoryPath))"))
        #expect(reason(folder.path).contains("is a folder, not a file"))
        let text = folder.appendingPathComponent("notes.txt").path
        try Data("hello".utf8).write(to: URL(fileURLWithPath: text))
        #expect(reason(text).contains("is not a PEM P-256 private key"))
        let key = folder.appendingPathComponent("key.p8").path
        try Data(P256.Signing.PrivateKey().pemRepresentation.utf8).write(to: URL(fileURLWithPath: key))
        #expect(reason(key) == "read")
        // Unreadable by this user (root reads every file: nothing to show then).
        if getuid() != 0 {
            try FileManager.default.setAttributes([.posixPermissions: 0o000], ofItemAtPath: key)
            #expect(reason(key).contains("cannot be read by this user (it belongs to"), "\(reason(key))")
        }
    }
}
