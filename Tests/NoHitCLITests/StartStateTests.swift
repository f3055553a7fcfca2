import Crypto
import Delivery
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// State that never silently changes (issue 58, item 4): a start refused before it serves leaves
/// the disk as it found it, a data directory that cannot be made is said in one sentence, and a
/// missing VAPID key is refused while Web Push subscriptions made with it exist.
extension OperatorCLITests {
    func serve(_ dataDir: String, port: Int) async throws -> Executable.Output {
        try await Executable.onThread {
            try self.nohit([
                "serve", "--date", "2020-08-25", "--data", TestData.path("retrosheet"), "--data-dir", dataDir,
                "--port", "\(port)",
            ])
        }
    }

    func contents(_ name: String) -> [String]? {
        try? FileManager.default.contentsOfDirectory(atPath: path(name)).sorted()
    }

    /// A port in use refuses the start after the store is open: a new data directory is removed
    /// again, an empty one stays empty, and one with a database keeps it and what it holds.
    @Test func aRefusedStartLeavesNothingItMade() async throws {
        let (listener, port) = try Self.occupyPort()
        defer { close(listener) }
        try FileManager.default.createDirectory(atPath: path("empty"), withIntermediateDirectories: true)
        for dataDir in ["new", "empty"] {
            let result = try await serve(dataDir, port: port)
            #expect(result.status == 2, "\(result.standardError)")
            #expect(result.standardError.contains("the start was refused, so what it had made is removed again: "))
            #expect(result.standardError.contains("port \(port) on 127.0.0.1 is in use"))
        }
        #expect(contents("new") == nil)
        #expect(contents("empty") == [])

        let added = try nohit(["devices", "add", "--data-dir", "used", "--console", "me"])
        #expect(added.status == 0, "\(added.standardError)")
        let before = try #require(contents("used"))
        let refused = try await serve("used", port: port)
        #expect(refused.status == 2)
        #expect(
            refused.standardError.contains("removed again: used/vapid.pem")
                || refused.standardError.contains("used/web-analytics.json"), "\(refused.standardError)")
        #expect(contents("used") == before)
        let list = try nohit(["devices", "list", "--data-dir", "used"])
        #expect(list.standardOutput.contains("console: 1 active"), "\(list.standardOutput)")

        // A database that was there keeps the secrets key a refused start made for it: secrets it
        // held in the clear may have been sealed with that key already.
        try FileManager.default.removeItem(atPath: path("used/secrets.key"))
        let keyless = try await serve("used", port: port)
        #expect(keyless.status == 2)
        #expect(FileManager.default.fileExists(atPath: path("used/secrets.key")), "\(keyless.standardError)")
        #expect(!keyless.standardError.contains("secrets.key,") && !keyless.standardError.contains("used/ and all"))
    }

    /// A data directory that is a file, or cannot be made, is one sentence with what to do, not
    /// Foundation's error dump.
    @Test func aDataDirectoryThatCannotBeMadeIsOneSentence() async throws {
        #expect(FileManager.default.createFile(atPath: path("afile"), contents: Data("x".utf8)))
        let cases = [
            (
                "afile",
                "nohit: the data directory afile is a file, not a directory: give another with --data-dir "
                    + "(NOHIT_STORE_DATA_DIR), or move the file away\n"
            ),
            (
                "afile/data",
                "nohit: cannot make the data directory afile/data (from \(folder.path)): not a directory: give one "
                    + "this user may write with --data-dir (NOHIT_STORE_DATA_DIR)\n"
            ),
        ]
        for (dataDir, sentence) in cases {
            for command in [["devices", "add", "--data-dir", dataDir, "--console", "me"]] {
                let result = try nohit(command)
                #expect(result.status == 2)
                #expect(result.standardError == sentence, "\(command)")
            }
            let served = try await serve(dataDir, port: 0)
            #expect(served.status == 2)
            #expect(served.standardError.hasSuffix(sentence), "\(served.standardError)")
            #expect(!served.standardError.contains("NSCocoaErrorDomain"))
        }
        #expect(try String(contentsOfFile: path("afile"), encoding: .utf8) == "x")
    }

    /// With a Web Push subscription stored, a missing `vapid.pem` is refused (a new key would leave
    /// that browser without alerts), and nothing is written; a key given on purpose is taken.
    @Test func aMissingVAPIDKeyIsRefusedWhileSubscriptionsExist() async throws {
        let subscriber = P256.KeyAgreement.PrivateKey()
        let added = try nohit([
            "devices", "add", "--data-dir", "d", "--allow-private-networks", "--web-push", "https://127.0.0.1:9/push",
            "--p256dh", Base64URL.encode(subscriber.publicKey.x963Representation),
            "--auth", Base64URL.encode(Data((0..<16).map { _ in UInt8.random(in: 0...255) })),
        ])
        #expect(added.status == 0, "\(added.standardError)")
        let before = try #require(contents("d"))
        let refused = try await serve("d", port: 0)
        #expect(refused.status == 2)
        #expect(
            refused.standardError.contains(
                "nohit: the Web Push VAPID key d/vapid.pem is missing, and 1 active Web Push subscription was made "
                    + "with it: restore it from your backup"), "\(refused.standardError)")
        #expect(contents("d") == before)

        // Starting over on purpose: a key the operator made and gave.
        let key = P256.Signing.PrivateKey().pemRepresentation
        #expect(FileManager.default.createFile(atPath: path("new-vapid.pem"), contents: Data(key.utf8)))
        let (listener, port) = try Self.occupyPort()
        defer { close(listener) }
        let given = try await Executable.onThread {
            try self.nohit([
                "serve", "--date", "2020-08-25", "--data", TestData.path("retrosheet"), "--data-dir", "d",
                "--vapid-key", "new-vapid.pem", "--port", "\(port)",
            ])
        }
        // Past the key (it stops at the port in use, after the providers are ready).
        #expect(given.standardError.contains("Web Push ready"), "\(given.standardError)")
        #expect(!given.standardError.contains("VAPID key new-vapid.pem is missing"))
    }
}

extension OperatorCLITests {
    /// A `NOHIT_*` variable that names no setting is a warning naming the closest one (a typo
    /// would otherwise leave the default in place without a word); the project's own variables and
    /// far-off names are not matched to a setting.
    @Test func anUnknownVariableIsWarnedWithTheClosestSetting() throws {
        let result = try nohit(
            ["devices", "add", "--data-dir", "d", "--console", "me"],
            environment: [
                "NOHIT_HTTP_PROT": "9000", "NOHIT_STORE_DATADIR": "x", "NOHIT_ZEBRA": "1", "NOHIT_TEST_SEED": "1",
                "NOHIT_CONFIG": "",
            ])
        #expect(result.status == 0, "\(result.standardError)")
        let warnings = result.standardError.split(separator: "\n").filter { $0.contains("warning:") }.map(String.init)
        let tail = "; `nohit settings` lists every setting"
        let expected: [String] = [
            "nohit: warning: the environment variable NOHIT_HTTP_PROT is not a setting and is ignored (did you mean "
                + "NOHIT_HTTP_PORT, http.port?)" + tail,
            "nohit: warning: the environment variable NOHIT_STORE_DATADIR is not a setting and is ignored (did you "
                + "mean NOHIT_STORE_DATA_DIR, store.data-dir?)" + tail,
            "nohit: warning: the environment variable NOHIT_ZEBRA is not a setting and is ignored" + tail,
        ]
        #expect(warnings == expected, "\(result.standardError)")
        // The data directory given as a flag was used: the typo did not move it.
        #expect(FileManager.default.fileExists(atPath: path("d/nohit.sqlite")))
    }
}

extension OperatorCLITests {
    /// `serve` stopped by Ctrl-C (SIGINT) says what it finished and what it left for the next start.
    @Test func serveSaysWhatItFinishedAndLeftWhenStopped() async throws {
        let process = Process()
        process.executableURL = Executable.productsDirectory.appendingPathComponent("nohit")
        process.arguments = [
            "serve", "--date", "2020-08-25", "--data", TestData.path("retrosheet"), "--data-dir", "d", "--port", "0",
        ]
        process.currentDirectoryURL = folder
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let output = try await Executable.onThread {
            var collected = ""
            var signalled = false
            while true {
                let chunk = errors.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                collected += String(decoding: chunk, as: UTF8.self)
                if !signalled && collected.contains("stops gracefully") {
                    signalled = true
                    kill(process.processIdentifier, SIGINT)
                }
            }
            process.waitUntilExit()
            return collected
        }
        #expect(output.contains("\nnohit: stopped by SIGINT after "), "\(output)")
        #expect(output.contains(" alerts planned; 0 delivered, 0 failed, 0 devices pruned\n"), "\(output)")
        #expect(output.hasSuffix("nohit: left nothing to send: the outbox is empty\n"), "\(output)")
    }
}
