import Foundation
import JSON
import Server
import Storage

/// The web app's own analytics project, `nohit-web`, made at the first start of `nohit serve` on a
/// store that keeps analytics: its id and keys in `<data-dir>/web-analytics.json` (mode 0600; the
/// store keeps only the keys' hashes). The write key goes to the page, which records its views,
/// taps and opened alerts with it; the operator reads them on the Metrics page (admin token) or with
/// the read key through Keen's API.
///
/// An instance that finds the project already made (by another instance on the same PostgreSQL
/// database, or before its data directory was lost) records into it too, with an access key of its
/// own permitted to write, so every instance's pages count in one project.
package enum WebAnalyticsProject {
    static let preferredID = "nohit-web"

    struct Saved: Codable {
        var projectID: String
        var writeKey: String
        /// The project's read and master keys, when this instance made it.
        var readKey: String?
        var masterKey: String?

        enum CodingKeys: String, CodingKey {
            case projectID = "project_id"
            case writeKey = "write_key"
            case readKey = "read_key"
            case masterKey = "master_key"
        }
    }

    package static func ensure(store: any AnalyticsStore, dataDir: String, now: Date) async throws
        -> ClientConfiguration.Analytics
    {
        let path = (dataDir as NSString).appendingPathComponent("web-analytics.json")
        if let data = FileManager.default.contents(atPath: path) {
            let saved: Saved
            do {
                saved = try JSONDecoder().decode(Saved.self, from: data)
            } catch {
                throw StartError(
                    "\(path) is not the web app's analytics project (\(error)); move it away to make a new one")
            }
            // The file and the database agree, or the database is not the one the file was made for.
            if try await store.key(project: saved.projectID, secret: saved.writeKey) != nil {
                return .init(projectID: saved.projectID, writeKey: saved.writeKey)
            }
        }
        let saved: Saved
        do {
            let project = try await store.createProject(name: "No-Hitter Alerts web app", id: preferredID, now: now)
            saved = Saved(
                projectID: project.id, writeKey: project.writeKey, readKey: project.readKey,
                masterKey: project.masterKey)
        } catch let error as StoreError {
            // Made already (perhaps this very moment, by another instance starting beside this one).
            guard try await store.analyticsProjects().contains(where: { $0.id == preferredID }) else { throw error }
            let host = ProcessInfo.processInfo.hostName
            let (secret, _) = try await store.createAccessKey(
                project: preferredID, name: "web app on \(host) (\(dataDir))", isActive: true, permitted: ["writes"],
                options: JSONObject(), now: now)
            saved = Saved(projectID: preferredID, writeKey: secret, readKey: nil, masterKey: nil)
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try FileManager.default.createDirectory(atPath: dataDir, withIntermediateDirectories: true)
        guard
            FileManager.default.createFile(
                atPath: path, contents: try encoder.encode(saved), attributes: [.posixPermissions: 0o600])
        else {
            throw StartError("could not write \(path)")
        }
        return .init(projectID: saved.projectID, writeKey: saved.writeKey)
    }
}
