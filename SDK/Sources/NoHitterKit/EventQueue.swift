import Foundation

/// Events waiting to be uploaded, each in a file of its own under `directory` (written whole
/// before it counts, so a crash loses none that were recorded), named by its place in the queue
/// and the attempts made to send it: `0000000000000042-1.json` holds
/// `{"collection":…,"event":{…}}`. Used only from the recorder's actor.
final class EventQueue {
    struct Entry: Hashable {
        var sequence: Int
        var attempts: Int

        var name: String { String(format: "%016d-%d.json", sequence, attempts) }
    }

    let directory: URL
    /// Oldest first.
    private(set) var entries: [Entry] = []

    init(directory: URL) throws {
        self.directory = directory
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
            guard name.hasSuffix(".json") else {
                // A write cut short (`.tmp`) never became an event.
                if name.hasPrefix(".") || name.hasSuffix(".tmp") {
                    try? FileManager.default.removeItem(at: directory.appendingPathComponent(name))
                }
                continue
            }
            let parts = name.dropLast(5).split(separator: "-")
            guard parts.count == 2, let sequence = Int(parts[0]), let attempts = Int(parts[1]) else { continue }
            entries.append(Entry(sequence: sequence, attempts: attempts))
        }
        entries.sort { $0.sequence < $1.sequence }
    }

    var count: Int { entries.count }

    /// Adds an event at the end.
    func append(collection: String, event: [String: MetricValue]) throws {
        let entry = Entry(sequence: (entries.last?.sequence ?? 0) + 1, attempts: 0)
        let body = try JSONEncoder.sorted.encode(Stored(collection: collection, event: event))
        let temporary = directory.appendingPathComponent(".\(entry.name).tmp")
        try body.write(to: temporary)
        try FileManager.default.moveItem(at: temporary, to: directory.appendingPathComponent(entry.name))
        entries.append(entry)
    }

    struct Stored: Codable {
        var collection: String
        var event: [String: MetricValue]
    }

    /// The oldest `limit` events (those in `excluding` aside) with what they hold (one that cannot be read is removed).
    func oldest(_ limit: Int, excluding: Set<Int> = []) -> [(entry: Entry, stored: Stored)] {
        var found: [(Entry, Stored)] = []
        var unreadable: [Entry] = []
        for entry in entries.lazy.filter({ !excluding.contains($0.sequence) }).prefix(limit) {
            guard let data = try? Data(contentsOf: directory.appendingPathComponent(entry.name)),
                let stored = try? JSONDecoder().decode(Stored.self, from: data)
            else {
                unreadable.append(entry)
                continue
            }
            found.append((entry, stored))
        }
        for entry in unreadable { remove(entry) }
        return found
    }

    func remove(_ entry: Entry) {
        try? FileManager.default.removeItem(at: directory.appendingPathComponent(entry.name))
        entries.removeAll { $0 == entry }
    }

    /// Counts a failed attempt on `entry`; its new attempts.
    @discardableResult
    func failed(_ entry: Entry) -> Int {
        var next = entry
        next.attempts += 1
        try? FileManager.default.moveItem(
            at: directory.appendingPathComponent(entry.name), to: directory.appendingPathComponent(next.name))
        if let index = entries.firstIndex(of: entry) { entries[index] = next }
        return next.attempts
    }
}

extension JSONEncoder {
    static var sorted: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }
}
