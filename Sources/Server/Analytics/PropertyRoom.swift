import Analytics
import Storage
import Synchronization

/// The property names a collection may hold, and the collections a project may hold, charged
/// before a write: the web app's write key is public, and 2,000,000 new names sent through it in a
/// minute grew the schema every write and every restart reads (RSS 81 to 478 MB, writers stalled
/// for seconds, 969 MB after a restart). An event that would take its collection past the bound
/// is refused alone (`InvalidPropertyNameError`, as for any name refused), one that brings only
/// names already held is stored as ever. Each instance counts from the stored schema, read once
/// per project; several instances may together pass the bound by what each admits meanwhile.
final class PropertyRoom: Sendable {
    let perCollection: Int
    let perProject: Int
    private let projects = Mutex<[String: [String: Set<String>]]>([:])

    init(perCollection: Int, perProject: Int) {
        self.perCollection = perCollection
        self.perProject = perProject
    }

    /// For each of `events`, nil if it may be stored in `collection` (its new names, and the
    /// collection if new, now charged), or the error that refuses it. `schema` reads the stored
    /// one, the first time a project is met.
    func admit(
        project: String, collection: String, _ events: [IncomingEvent],
        schema: () async throws -> [CollectionSchema]
    ) async throws -> [KeenError?] {
        if projects.withLock({ $0[project] == nil }) {
            let stored = try await schema()
            let held = Dictionary(
                stored.map { ($0.name, Set($0.properties.map(\.path))) }, uniquingKeysWith: { $0.union($1) })
            projects.withLock { projects in
                if projects[project] == nil { projects[project] = held }
            }
        }
        return projects.withLock { projects in
            var collections = projects[project] ?? [:]
            defer { projects[project] = collections }
            guard collections[collection] != nil || collections.count < perProject else {
                let refused = KeenError.invalidCollectionName(
                    "project \(project) holds its \(perProject) collections: '\(collection)' would be one more")
                return events.map { _ in refused }
            }
            var names = collections[collection] ?? []
            defer { collections[collection] = names }
            return events.map { event -> KeenError? in
                var new = 0
                for leaf in event.leaves where !names.contains(leaf.path) { new += 1 }
                guard new > 0 else { return nil }
                guard names.count + new <= perCollection else {
                    return .invalidPropertyName(
                        "collection '\(collection)' holds \(names.count) of its \(perCollection) property names; this event brings \(new) more"
                    )
                }
                for leaf in event.leaves { names.insert(leaf.path) }
                return nil
            }
        }
    }

    /// Reads a project's schema again at its next write (after a delete).
    func forget(project: String) {
        _ = projects.withLock { $0.removeValue(forKey: project) }
    }
}
