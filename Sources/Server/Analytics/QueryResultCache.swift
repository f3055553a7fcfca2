import Analytics
import Synchronization

/// Ad-hoc query results kept for Keen's `max_age`: a query that names one is answered from a
/// result of the same query (same project, analysis, parameters and key filters) computed at most
/// that many seconds before, else run and kept. Bounded: the oldest results go first past
/// `maximumEntries` or `maximumBytes`. Each instance keeps its own.
final class QueryResultCache: Sendable {
    struct Entry {
        var result: JSONValue
        var metadata: JSONObject
        var at: Int64
        var bytes: Int
    }

    let maximumEntries: Int
    let maximumBytes: Int
    private let state = Mutex<(entries: [String: Entry], order: [String], bytes: Int)>(([:], [], 0))

    init(maximumEntries: Int = 1_000, maximumBytes: Int = 32 << 20) {
        self.maximumEntries = maximumEntries
        self.maximumBytes = maximumBytes
    }

    /// The key of a query: its parameters in a fixed order (`max_age` and `include_metadata`
    /// left out: they do not change the answer).
    static func key(project: String, analysis: String, parameters: JSONObject, keyFilters: JSONValue?) -> String {
        var members = parameters.members.filter { $0.key != "max_age" && $0.key != "include_metadata" }
        members.sort { $0.key < $1.key }
        return "\(project)\u{0}\(analysis)\u{0}\(JSONValue.object(JSONObject(members)).jsonText)\u{0}"
            + (keyFilters?.jsonText ?? "")
    }

    /// A result no older than `maxAge` seconds at `now` (µs), with its metadata saying so.
    func get(_ key: String, maxAge: Int, now: Int64) -> (JSONValue, JSONObject)? {
        guard let entry = state.withLock({ $0.entries[key] }), now - entry.at <= Int64(maxAge) * 1_000_000 else {
            return nil
        }
        var metadata = entry.metadata
        metadata["from_cache"] = true
        metadata["computed_at"] = .string(KeenTime.format(entry.at))
        metadata["age_seconds"] = .number(Double(max(0, now - entry.at) / 1_000_000))
        return (entry.result, metadata)
    }

    func put(_ key: String, result: JSONValue, metadata: JSONObject, at: Int64) {
        let bytes = result.jsonBytes.count + key.utf8.count
        guard bytes <= maximumBytes / 4 else { return }
        state.withLock { state in
            if let old = state.entries[key] {
                state.bytes -= old.bytes
                state.order.removeAll { $0 == key }
            }
            state.entries[key] = Entry(result: result, metadata: metadata, at: at, bytes: bytes)
            state.order.append(key)
            state.bytes += bytes
            while state.order.count > maximumEntries || state.bytes > maximumBytes, !state.order.isEmpty {
                let oldest = state.order.removeFirst()
                state.bytes -= state.entries.removeValue(forKey: oldest)?.bytes ?? 0
            }
        }
    }
}
