import ArgumentParser
import Assembly
import Crypto
import Foundation
import Server
import Storage

/// `nohit backup DIR` and `nohit restore DIR`: the state a service cannot be rebuilt without, kept
/// together — the database (SQLite's online backup, taken while the service runs), the key sealing
/// its secrets, the Web Push VAPID key and the web app's analytics project — with a manifest of
/// each file's SHA-256, so a restore puts back exactly what was taken or nothing.
struct BackupCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Copy the database and its keys into a new directory, while the service runs.",
        discussion: """
            Copies the SQLite database with SQLite's online backup (consistent as of one commit, safe \
            while nohit serves), secrets.key, vapid.pem and web-analytics.json into DIR (new or empty, \
            made 0700; files 0600), with backup.json naming each file and its SHA-256. On PostgreSQL it \
            copies the key files and prints the pg_dump command for the database. `nohit restore DIR` \
            puts it back into a new data directory.
            """)

    @Argument(help: "The directory to write (new, or empty).") var directory: String
    @OptionGroup var store: StoreOptions

    func run() async throws {
        let config = try await store.settings()
        let location = try store.location(config)
        let files = try StateFiles(location, vapidKey: try config.string("vapid.key"))
        try StateFiles.makeEmptyDirectory(directory)
        var manifest = BackupManifest(
            madeAt: Date(), nohit: BuildInfo.version, database: location.isPostgres ? "postgresql" : "sqlite")
        if !location.isPostgres {
            guard FileManager.default.fileExists(atPath: location.databasePath) else {
                throw ValidationError(
                    "no database at \(location.databasePath): give the data directory the service uses "
                        + "(--data-dir, NOHIT_STORE_DATA_DIR) or its database (--database)")
            }
            let copy = (directory as NSString).appendingPathComponent(StateFiles.databaseName)
            do {
                try SQLiteBackup.copy(from: location.databasePath, to: copy)
            } catch {
                throw ValidationError("\(error)")
            }
            try StateFiles.ownerOnly(copy)
            manifest.files[StateFiles.databaseName] = try StateFiles.sha256(copy)
        }
        for (name, source) in files.keys where FileManager.default.fileExists(atPath: source) {
            let copy = (directory as NSString).appendingPathComponent(name)
            try StateFiles.copy(source, to: copy)
            manifest.files[name] = try StateFiles.sha256(copy)
        }
        try manifest.write(to: directory)
        print("backed up into \(directory)/: " + manifest.files.keys.sorted().joined(separator: ", "))
        if manifest.files["secrets.key"] == nil {
            print("no secrets.key at \(files.secretsKey): nothing sealed was stored yet")
        }
        if location.isPostgres {
            print(
                "the database is PostgreSQL: dump it beside these files with\n"
                    + "  pg_dump --format=custom --file \(directory)/nohit.pgdump '\(location.databasePath)'\n"
                    + "(the schema nohit uses is in the URL; give the password as PGPASSWORD or in ~/.pgpass)")
        }
    }
}

struct RestoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract: "Put a backup made by `nohit backup` into a new data directory.",
        discussion: """
            Checks every file of DIR against backup.json's SHA-256 and the database with SQLite's \
            integrity check before writing anything, refuses a data directory that already holds a \
            database or a key (it never writes over one), then copies them in and opens the database \
            as the service would. Start the service on the data directory afterwards.
            """)

    @Argument(help: "The backup's directory (what `nohit backup` wrote).") var directory: String
    @OptionGroup var store: StoreOptions

    func run() async throws {
        let config = try await store.settings()
        let location = try store.location(config)
        let files = try StateFiles(location, vapidKey: try config.string("vapid.key"))
        let manifest = try BackupManifest.read(from: directory)
        for (name, digest) in manifest.files.sorted(by: { $0.key < $1.key }) {
            let path = (directory as NSString).appendingPathComponent(name)
            guard FileManager.default.fileExists(atPath: path) else {
                throw ValidationError("the backup \(directory) has lost \(name), which its backup.json lists")
            }
            guard try StateFiles.sha256(path) == digest else {
                throw ValidationError(
                    "\(path) is not the file that was backed up (its SHA-256 differs from backup.json's): nothing "
                        + "was restored")
            }
        }
        var targets = files.keys
        if manifest.database == "sqlite" {
            guard !location.isPostgres else {
                throw ValidationError("this backup holds an SQLite database; the settings name PostgreSQL")
            }
            let problems = try SQLiteBackup.integrity(
                of: (directory as NSString).appendingPathComponent(StateFiles.databaseName))
            guard problems == "ok" else {
                throw ValidationError("the backed-up database fails SQLite's integrity check: \(problems)")
            }
            targets.append((StateFiles.databaseName, location.databasePath))
        }
        let present = targets.filter { manifest.files[$0.0] != nil }
        for (_, target) in present where FileManager.default.fileExists(atPath: target) {
            throw ValidationError(
                "\(target) is there already: restore into a new data directory (--data-dir), or move it away; a "
                    + "restore never writes over a database or a key")
        }
        for folder in Set(present.map { ($0.1 as NSString).deletingLastPathComponent } + [location.dataDir])
        where !folder.isEmpty {
            try FileManager.default.createDirectory(
                atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        for (name, target) in present {
            try StateFiles.copy((directory as NSString).appendingPathComponent(name), to: target)
        }
        // Opened as the service opens it: its schema and its key are checked.
        let counts = try await location.withStore(existing: true) { opened in
            (try await opened.store.deviceCount(), try await opened.store.outboxCounts().total)
        }
        print(
            "restored \(present.map(\.0).sorted().joined(separator: ", ")) (backed up \(manifest.madeAt), "
                + "nohit \(manifest.nohit)) into \(location.dataDir)/: \(counts.0) device\(counts.0 == 1 ? "" : "s"), \(counts.1) deliveries in "
                + "the outbox; start it with nohit serve --data-dir \(location.dataDir)")
        if location.isPostgres {
            print(
                "the database is PostgreSQL: restore its dump with\n"
                    + "  pg_restore --dbname '\(location.databasePath)' \(directory)/nohit.pgdump")
        }
    }
}

/// The files a data directory holds besides the database, where this service keeps them.
struct StateFiles {
    static let databaseName = "nohit.sqlite"
    let secretsKey: String
    /// The name each is kept under in a backup, and its place here.
    let keys: [(String, String)]

    init(_ location: StoreLocation, vapidKey: String?) throws {
        secretsKey = location.secretsKeyPath
        keys = [
            ("secrets.key", location.secretsKeyPath),
            ("vapid.pem", vapidKey ?? (location.dataDir as NSString).appendingPathComponent("vapid.pem")),
            ("web-analytics.json", (location.dataDir as NSString).appendingPathComponent("web-analytics.json")),
        ]
    }

    static func makeEmptyDirectory(_ path: String) throws {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue, (try FileManager.default.contentsOfDirectory(atPath: path)).isEmpty else {
                throw ValidationError("\(path) is there and not an empty directory: back up into a new one")
            }
            return
        }
        do {
            try FileManager.default.createDirectory(
                atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw ValidationError("cannot make \(path): \(StoreLocation.reason(error))")
        }
    }

    static func copy(_ source: String, to target: String) throws {
        do {
            try FileManager.default.copyItem(atPath: source, toPath: target)
            try ownerOnly(target)
        } catch {
            throw ValidationError("cannot copy \(source) to \(target): \(StoreLocation.reason(error))")
        }
    }

    static func ownerOnly(_ path: String) throws {
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
    }

    static func sha256(_ path: String) throws -> String {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw ValidationError("cannot read \(path)")
        }
        defer { try? handle.close() }
        var hasher = SHA256()
        while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty { hasher.update(data: chunk) }
        return hasher.finalize().map { String(format: "%02x", $0) }.joined()
    }
}

/// `backup.json`: when and by what a backup was made, and each file's SHA-256.
struct BackupManifest: Codable {
    static let name = "backup.json"
    var format = 1
    var madeAt: Date
    var nohit: String
    /// sqlite or postgresql.
    var database: String
    var files: [String: String] = [:]

    enum CodingKeys: String, CodingKey {
        case format, nohit, database, files
        case madeAt = "made_at"
    }

    init(madeAt: Date, nohit: String, database: String) {
        self.madeAt = madeAt
        self.nohit = nohit
        self.database = database
    }

    func write(to directory: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        let path = (directory as NSString).appendingPathComponent(Self.name)
        guard
            FileManager.default.createFile(
                atPath: path, contents: try encoder.encode(self), attributes: [.posixPermissions: 0o600])
        else { throw ValidationError("cannot write \(path)") }
    }

    static func read(from directory: String) throws -> BackupManifest {
        let path = (directory as NSString).appendingPathComponent(name)
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ValidationError("no \(name) in \(directory): give the directory `nohit backup` wrote")
        }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        let manifest: BackupManifest
        do {
            manifest = try decoder.decode(BackupManifest.self, from: data)
        } catch {
            throw ValidationError("\(path) is not what `nohit backup` writes: \(error)")
        }
        guard manifest.format == 1, ["sqlite", "postgresql"].contains(manifest.database),
            manifest.files.keys.allSatisfy({ !$0.contains("/") && !$0.hasPrefix(".") })
        else {
            throw ValidationError("\(path) is not a backup this nohit reads (format \(manifest.format))")
        }
        return manifest
    }
}
