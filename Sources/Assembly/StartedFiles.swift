import Foundation

/// What a start may make on disk (the data directory, the SQLite database and its journal, the
/// secrets key, the VAPID key, the web analytics project), noted before it opens anything, so a
/// start refused before it serves can remove what it made and leave the disk as it found it.
struct StartedFiles: Sendable {
    /// The paths that were not there before the start (none inside another), deepest first.
    private let absent: [String]

    init(_ settings: ServiceSettings) {
        let location = settings.store
        let dataDir = location.dataDir
        var paths = [
            dataDir, location.secretsKeyPath, (dataDir as NSString).appendingPathComponent("web-analytics.json"),
        ]
        if let vapid = settings.delivery.newVAPIDKeyFile { paths.append(vapid) }
        if !location.isPostgres {
            let database = location.databasePath
            paths.append((database as NSString).deletingLastPathComponent)
            paths += [database, database + "-wal", database + "-shm", database + "-journal"]
        }
        let manager = FileManager.default
        // Compared as absolute paths: a key given as one may sit in a data directory given relative.
        func absolute(_ path: String) -> String { URL(fileURLWithPath: path).standardizedFileURL.path }
        var missing = Set(paths.filter { !$0.isEmpty && !manager.fileExists(atPath: $0) }.map(absolute))
        // A database that was there may have had secrets sealed with the key this start makes
        // (stored before sealing existed): that key, and a directory holding it, always stay.
        if location.isPostgres || manager.fileExists(atPath: location.databasePath) {
            let key = absolute(location.secretsKeyPath)
            missing = missing.filter { $0 != key && !key.hasPrefix($0 + "/") }
        }
        // A directory the start will make is removed whole: what it holds is not named again.
        absent = missing.filter { path in !missing.contains { path.hasPrefix($0 + "/") } }
            .sorted { $0.count > $1.count }
    }

    /// Removes what the start made (a directory it made, with everything in it); what it removed,
    /// or nil when it had made nothing.
    func removeNew() -> String? {
        let manager = FileManager.default
        var removed: [String] = []
        var failed: [String] = []
        for path in absent where manager.fileExists(atPath: path) {
            do {
                var isDirectory: ObjCBool = false
                _ = manager.fileExists(atPath: path, isDirectory: &isDirectory)
                try manager.removeItem(atPath: path)
                removed.append(isDirectory.boolValue ? "\(path)/ and all in it" : path)
            } catch {
                failed.append("\(path) (\(StoreLocation.reason(error)))")
            }
        }
        guard !removed.isEmpty || !failed.isEmpty else { return nil }
        return removed.joined(separator: ", ")
            + (failed.isEmpty ? "" : "; could not remove \(failed.joined(separator: ", "))")
    }
}
