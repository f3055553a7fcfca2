import Synchronization

/// `NOHIT_*` environment variables that name no setting: a typo (`NOHIT_HTTP_PROT`) would
/// otherwise be ignored without a word, and the default used. Each is a warning, once per process,
/// naming the closest setting.
enum UnknownVariables {
    /// Variables nohit reads that are not settings (`NOHIT_CONFIG`, the bundled data, a web folder
    /// for development).
    static let read: Set<String> = ["NOHIT_CONFIG", "NOHIT_RETROSHEET", "NOHIT_WEB_FOLDER"]

    /// Variables the project's tests, benchmarks and scripts read, never the service: not typos.
    static let tooling: Set<String> = [
        "NOHIT_ALL_SEASONS", "NOHIT_SHARED_DATA", "NOHIT_EQUIVALENCE_SEASON", "NOHIT_SERVER_PID",
        "NOHIT_SERVER_COMMAND", "NOHIT_PG_PORT", "NOHIT_IN_NETNS", "NOHIT_DEVICE_ID", "NOHIT_DEVICE_SECRET",
        "NOHIT_BIN",
    ]
    static let toolingPrefixes = ["NOHIT_TEST_", "NOHIT_BENCH_"]

    private static let warned = Mutex(false)

    /// The warnings for `environment`, one line each; empty when every `NOHIT_*` name is known.
    static func warnings(_ environment: [String: String], settings: [String]) -> [String] {
        let names = Dictionary(uniqueKeysWithValues: settings.map { (Settings.environmentName($0), $0) })
        return environment.keys.filter { $0.hasPrefix("NOHIT_") }.sorted().compactMap { name in
            guard names[name] == nil, !read.contains(name), !tooling.contains(name),
                !toolingPrefixes.contains(where: name.hasPrefix)
            else { return nil }
            // The nearest name, when it is near: a typo, not another word.
            let closest = names.keys.sorted().map { ($0, distance(name, $0)) }.min { $0.1 < $1.1 }
                .flatMap { $0.1 <= max(2, (name.count - "NOHIT_".count) / 3) ? $0.0 : nil }
            return "warning: the environment variable \(name) is not a setting and is ignored"
                + (closest.map { " (did you mean \($0), \(names[$0]!)?)" } ?? "")
                + "; `nohit settings` lists every setting"
        }
    }

    /// Prints `warnings` on standard error, the first time only.
    static func warnOnce(_ environment: [String: String], settings: [String]) {
        guard
            warned.withLock({ done in
                defer { done = true }; return !done
            })
        else { return }
        for line in warnings(environment, settings: settings) { StandardStreams.writeError("nohit: \(line)\n") }
    }

    /// The edit distance between two names (insertions, deletions, substitutions, and swaps of
    /// neighbours: `PROT` is one from `PORT`).
    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a.utf8)
        let b = Array(b.utf8)
        guard !a.isEmpty, !b.isEmpty else { return max(a.count, b.count) }
        var table = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { table[i][0] = i }
        for j in 0...b.count { table[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                var best = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    best = min(best, table[i - 2][j - 2] + 1)
                }
                table[i][j] = best
            }
        }
        return table[a.count][b.count]
    }
}
