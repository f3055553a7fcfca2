import Analytics
import JSON
import Synchronization

/// Ad-hoc query results kept for Keen's `max_age`: a query that names one is answered from a
/// result of the same query (same project, analysis, parameters and key filters) computed at most
/// that many seconds before, else run and kept. Results are kept as their JSON text (what they
/// take is what is counted) and bounded: the oldest go first past `maximumEntries` or
/// `maximumBytes`. Each instance keeps its own.
final class QueryResultCache: Sendable {
    struct Entry {
        /// `{"result": ..., "execution_metadata": ...}` as JSON text.
        var text: [UInt8]
        var at: Int64
        var bytes: Int { text.count }
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
        guard let entry = state.withLock({ $0.entries[key] }), now - entry.at <= Int64(maxAge) * 1_000_000,
            let kept = try? JSONValue.parse(entry.text), let result = kept["result"]
        else {
            return nil
        }
        return (result, Self.fromCache(kept["execution_metadata"]?.object ?? JSONObject(), at: entry.at, now: now))
    }

    /// A kept result's execution metadata as its answer gives it: that it came from a cache,
    /// when it was computed and how old it is.
    static func fromCache(_ metadata: JSONObject, at: Int64, now: Int64) -> JSONObject {
        var metadata = metadata
        metadata["from_cache"] = true
        metadata["computed_at"] = .string(KeenTime.format(at))
        metadata["age_seconds"] = .number(Double(max(0, now - at) / 1_000_000))
        return metadata
    }

    func put(_ key: String, result: JSONValue, metadata: JSONObject, at: Int64) {
        let text = JSONValue.object(JSONObject([("result", result), ("execution_metadata", .object(metadata))]))
            .jsonBytes
        guard text.count + key.utf8.count <= maximumBytes / 4 else { return }
        state.withLock { state in
            if let old = state.entries[key] {
                state.bytes -= old.bytes + key.utf8.count
                state.order.removeAll { $0 == key }
            }
            state.entries[key] = Entry(text: text, at: at)
            state.order.append(key)
            state.bytes += text.count + key.utf8.count
            while state.order.count > maximumEntries || state.bytes > maximumBytes, !state.order.isEmpty {
                let oldest = state.order.removeFirst()
                state.bytes -= (state.entries.removeValue(forKey: oldest)?.bytes ?? 0) + oldest.utf8.count
            }
        }
    }
}
