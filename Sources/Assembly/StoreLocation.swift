import Foundation
import Storage

/// A start refused for a reason the operator can fix, said in one sentence: the command prints it
/// after `nohit: ` and exits with status 2.
package struct StartError: Error, CustomStringConvertible {
    package var description: String

    package init(_ description: String) {
        self.description = description
    }
}

/// An open database: every store protocol, and for PostgreSQL what instances agree through it.
package struct OpenedStore: Sendable {
    package var store: any ServiceStore
    /// Set when several instances may share the database (PostgreSQL).
    package var coordination: (any CoordinationStore)?
    /// The file, or the URL without its password (for messages).
    package var name: String

    package init(store: any ServiceStore, coordination: (any CoordinationStore)?, name: String) {
        self.store = store
        self.coordination = coordination
        self.name = name
    }
}

/// Where the service keeps its state: the data directory, and the database (an SQLite file in it
/// by default, or PostgreSQL for several instances).
package struct StoreLocation: Sendable {
    package static let defaultDataDir = "nohit-data"
    package static let defaultLeaseSeconds = 20

    package var dataDir: String
    /// An SQLite file, or a `postgres://` URL.
    package var databasePath: String
    /// The secrets key's file, when not beside the database (SQLite) or in the data directory
    /// (PostgreSQL).
    package var secretsKey: String?
    package var instanceID: String?
    package var leaseSeconds = StoreLocation.defaultLeaseSeconds

    /// `database` defaults to `nohit.sqlite` in the data directory.
    package init(
        dataDir: String = StoreLocation.defaultDataDir, database: String? = nil, secretsKey: String? = nil,
        instanceID: String? = nil, leaseSeconds: Int = StoreLocation.defaultLeaseSeconds
    ) {
        self.dataDir = dataDir
        self.databasePath = database ?? (dataDir as NSString).appendingPathComponent("nohit.sqlite")
        self.secretsKey = secretsKey
        self.instanceID = instanceID
        self.leaseSeconds = leaseSeconds
    }

    /// Whether the database is PostgreSQL.
    package var isPostgres: Bool { PostgresStore.Location.isURL(databasePath) }

    /// The secrets key's file.
    package var secretsKeyPath: String {
        if let secretsKey { return secretsKey }
        guard !isPostgres else { return (dataDir as NSString).appendingPathComponent("secrets.key") }
        let directory = (databasePath as NSString).deletingLastPathComponent
        return ((directory.isEmpty ? "." : directory) as NSString).appendingPathComponent("secrets.key")
    }

    /// Opens (creating and migrating as needed) the database and runs `body` with it. Its
    /// directory, when nohit makes it, and the data directory are the owner's alone (0700); an
    /// SQLite file is 0600. `existing`: an SQLite file that is not there is refused (a command
    /// that only reads). What a first start creates is told to `notice` once, with what to back up.
    package func withStore<Result: Sendable>(
        existing: Bool = false, notice: @Sendable (String) -> Void = { _ in },
        _ body: @Sendable (OpenedStore) async throws -> Result
    ) async throws -> Result {
        let manager = FileManager.default
        let before = [dataDir, databasePath, secretsKeyPath].filter { manager.fileExists(atPath: $0) }
        guard isPostgres else {
            if existing && !manager.fileExists(atPath: databasePath) {
                throw StartError(
                    "no database at \(databasePath) (from \(manager.currentDirectoryPath)): give the data directory "
                        + "the service uses (--data-dir, NOHIT_STORE_DATA_DIR) or its database (--database); this "
                        + "command only reads and creates none")
            }
            let store = try open()
            reportCreated(before: before, notice: notice)
            return try await body(OpenedStore(store: store, coordination: nil, name: databasePath))
        }
        let location: PostgresStore.Location
        do {
            location = try PostgresStore.Location(url: databasePath)
        } catch {
            throw StartError("cannot open the database: \(error)")
        }
        try makeDirectory(dataDir)
        do {
            return try await PostgresStore.withStore(
                location, secretsKeyFile: secretsKeyPath, instance: instanceID ?? PostgresStore.newInstanceID(),
                leaseSeconds: Double(leaseSeconds), existing: existing
            ) { store in
                reportCreated(before: before, notice: notice)
                return try await body(OpenedStore(store: store, coordination: store, name: "\(location)"))
            }
        } catch let error as StoreError {
            throw StartError("\(error)")
        }
    }

    /// Says what opening the store created (the data directory, the SQLite file, the secrets key)
    /// and that the key goes with the database in every backup.
    private func reportCreated(before: [String], notice: (String) -> Void) {
        let manager = FileManager.default
        var created: [String] = []
        if !before.contains(dataDir) && manager.fileExists(atPath: dataDir) { created.append("\(dataDir)/") }
        if !isPostgres && !before.contains(databasePath) && manager.fileExists(atPath: databasePath) {
            created.append("\(databasePath) (the database)")
        }
        let keyCreated = !before.contains(secretsKeyPath) && manager.fileExists(atPath: secretsKeyPath)
        if keyCreated {
            created.append("\(secretsKeyPath) (the key sealing stored webhook and Web Push secrets)")
        }
        guard !created.isEmpty else { return }
        notice(
            "first start: created \(created.joined(separator: ", "))"
                + (keyCreated
                    ? "; back up the key along with the database: without it, stored secrets cannot be opened" : ""))
    }

    /// The data directory (or a database's own), made the owner's alone; a directory that cannot
    /// be made or is not one is refused in one sentence.
    private func makeDirectory(_ folder: String) throws {
        guard !folder.isEmpty else { return }
        let what = folder == dataDir ? "the data directory" : "the database's directory"
        var isDirectory: ObjCBool = false
        do {
            if FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory) {
                guard isDirectory.boolValue else {
                    throw StartError(
                        "\(what) \(folder) is a file, not a directory: give another with --data-dir "
                            + "(NOHIT_STORE_DATA_DIR), or move the file away")
                }
                if folder == dataDir {
                    try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: folder)
                }
            } else {
                try FileManager.default.createDirectory(
                    atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            }
        } catch let error as StartError {
            throw error
        } catch {
            throw StartError(
                "cannot make \(what) \(folder) (from \(FileManager.default.currentDirectoryPath)): "
                    + "\(Self.reason(error)): give one this user may write with --data-dir (NOHIT_STORE_DATA_DIR)")
        }
    }

    /// The system's reason for a file error, as `strerror` words it ("Permission denied", "Not a
    /// directory"), rather than Foundation's error dump.
    package static func reason(_ error: any Error) -> String {
        let error = error as NSError
        let underlying = (error.userInfo[NSUnderlyingErrorKey] as? any Error).map { $0 as NSError }
        for candidate in [underlying, error] {
            if let candidate, candidate.domain == NSPOSIXErrorDomain {
                return String(cString: strerror(Int32(candidate.code))).lowercased()
            }
        }
        switch error.code {
        case NSFileWriteNoPermissionError, NSFileReadNoPermissionError: return "permission denied"
        case NSFileWriteVolumeReadOnlyError: return "the file system is read-only"
        case NSFileWriteOutOfSpaceError: return "no space left on the device"
        default: return error.localizedDescription
        }
    }

    /// Opens (creating and migrating if needed) the SQLite database.
    package func open() throws -> SQLiteStore {
        let directory = (databasePath as NSString).deletingLastPathComponent
        do {
            for folder in Set([directory, dataDir]) { try makeDirectory(folder) }
            return try SQLiteStore(path: databasePath, secretsKeyFile: secretsKeyPath)
        } catch let error as StoreError {
            throw StartError("\(error)")
        } catch let error as StartError {
            throw error
        } catch {
            throw StartError("cannot open the database \(databasePath): \(error)")
        }
    }
}
