import Assembly
import Foundation
import Storage
import Testing

@testable import nohit

/// The web app's analytics project: made once, `nohit-web`; an instance with another data
/// directory on the same database (several instances on PostgreSQL) records into the same project
/// with a write key of its own; a restart reuses the keys it saved.
@Suite(.ownThreads) struct WebAnalyticsProjectTests {
    @Test func instancesWithTheirOwnDataDirectoriesShareTheProject() async throws {
        let store = try SQLiteStore(inMemory: ())
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("web-analytics-\(UUID())")
        defer { try? FileManager.default.removeItem(at: root) }
        let (one, two) = (root.appendingPathComponent("one").path, root.appendingPathComponent("two").path)

        let first = try await WebAnalyticsProject.ensure(store: store, dataDir: one, now: Date())
        #expect(first.projectID == "nohit-web")
        let second = try await WebAnalyticsProject.ensure(store: store, dataDir: two, now: Date())
        #expect(second.projectID == "nohit-web")
        #expect(second.writeKey != first.writeKey)
        #expect(try await store.analyticsProjects().map(\.id) == ["nohit-web"])
        for key in [first.writeKey, second.writeKey] {
            #expect(try await store.key(project: "nohit-web", secret: key)?.allows(.writes) == true)
            #expect(try await store.key(project: "nohit-web", secret: key)?.allows(.queries) == false)
        }
        // The second instance's file holds only its write key; the first's all three.
        let saved = try JSONSerialization.jsonObject(
            with: Data(contentsOf: URL(fileURLWithPath: two).appendingPathComponent("web-analytics.json")))
        #expect((saved as? [String: String])?.keys.sorted() == ["project_id", "write_key"])
        let attributes = try FileManager.default.attributesOfItem(
            atPath: (one as NSString).appendingPathComponent("web-analytics.json"))
        #expect((attributes[.posixPermissions] as? Int) == 0o600)

        // A restart reuses what it saved.
        let again = try await WebAnalyticsProject.ensure(store: store, dataDir: two, now: Date())
        #expect(again.writeKey == second.writeKey)
        #expect(try await store.accessKeys(project: "nohit-web").count == 1)
    }
}
