import ArgumentParser
import Foundation
import Server
import Storage

/// The web app's own analytics project, made at the first start of `nohit serve` on a store that
/// keeps analytics: its id and keys in `<data-dir>/web-analytics.json` (mode 0600; the store keeps
/// only the keys' hashes). The write key goes to the page, which records its views, taps and
/// opened alerts with it; the operator reads them on the Metrics page (admin token) or with the
/// read key through Keen's API.
enum WebAnalyticsProject {
    static let preferredID = "nohit-web"

    struct Saved: Codable {
        var projectID: String
        var writeKey: String
        var readKey: String
        var masterKey: String

        enum CodingKeys: String, CodingKey {
            case projectID = "project_id"
            case writeKey = "write_key"
            case readKey = "read_key"
            case masterKey = "master_key"
        }
    }

    static func ensure(store: any AnalyticsStore, dataDir: String, now: Date) async throws
        -> ClientConfiguration.Analytics
    {
        let path = (dataDir as NSString).appendingPathComponent("web-analytics.json")
        if let data = FileManager.default.contents(atPath: path) {
            let saved: Saved
            do {
                saved = try JSONDecoder().decode(Saved.self, from: data)
            } catch {
                throw ValidationError(
                    "\(path) is not the web app's analytics project (\(error)); move it away to make a new one")
            }
            // The file and the database agree, or the database is not the one the file was made for.
            if try await store.key(project: saved.projectID, secret: saved.writeKey) != nil {
                return .init(projectID: saved.projectID, writeKey: saved.writeKey)
            }
        }
        let taken = try await store.analyticsProjects().contains { $0.id == preferredID }
        let project = try await store.createProject(
            name: "No-Hitter Alerts web app", id: taken ? nil : preferredID, now: now)
        let saved = Saved(
            projectID: project.id, writeKey: project.writeKey, readKey: project.readKey,
            masterKey: project.masterKey)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try FileManager.default.createDirectory(atPath: dataDir, withIntermediateDirectories: true)
        guard
            FileManager.default.createFile(
                atPath: path, contents: try encoder.encode(saved), attributes: [.posixPermissions: 0o600])
        else {
            throw ValidationError("could not write \(path)")
        }
        return .init(projectID: project.id, writeKey: project.writeKey)
    }
}
