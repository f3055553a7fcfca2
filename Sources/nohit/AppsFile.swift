import Alerts
import ArgumentParser
import Delivery
import Foundation
import Pipeline

/// `--apps FILE` (`apps.file`): the apps one server sends to, as gorush users ask for (its issues
/// #99, #365):
///
///     {"apps": [
///       {"id": "nohit", "topic": "com.example.nohit", "environment": "production"},
///       {"id": "scored", "topic": "com.example.scored", "environment": "sandbox",
///        "apns": {"key": "AuthKey_ABCDE12345.p8", "key-id": "ABCDE12345", "team-id": "FGHIJ67890"},
///        "web-origin": "https://scored.example.com"}
///     ]}
///
/// Each app's `topic` is its bundle id; `environment` is what a device of it gets when it does not
/// say; `apns` is a key of its own (another team's; a relative path is read beside the file), else
/// the server-wide key signs its pushes; `web-origin` is where the app's web page is served, when
/// not from this server: that page may register its Web Push subscriptions here (CORS). With apps
/// declared, a device registers for one of them.
enum AppsFile {
    private struct File: Decodable {
        var apps: [App]
    }

    private struct App: Decodable {
        var id: String
        var topic: String
        var environment: String?
        var apns: Key?
        var webOrigin: String?

        enum CodingKeys: String, CodingKey {
            case id, topic, environment, apns
            case webOrigin = "web-origin"
        }

        struct Key: Decodable {
            var key: String
            var keyID: String
            var teamID: String

            enum CodingKeys: String, CodingKey {
                case key
                case keyID = "key-id"
                case teamID = "team-id"
            }
        }
    }

    /// The apps in `path`, each checked; an error names the file, the app and what is wrong.
    static func load(_ path: String) throws -> [APNsApp] {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw ValidationError("cannot read the apps file \(path): \((error as NSError).localizedDescription)")
        }
        let file: File
        do {
            file = try JSONDecoder().decode(File.self, from: data)
        } catch {
            throw ValidationError(
                "the apps file \(path) is not {\"apps\": [{\"id\", \"topic\", \"environment\", \"apns\", "
                    + "\"web-origin\"}]}: "
                    + Settings.jsonProblem(error, in: data))
        }
        if let problem = Settings.trailingComma(in: data) {
            throw ValidationError("the apps file \(path) is not JSON: \(problem)")
        }
        guard !file.apps.isEmpty else { throw ValidationError("the apps file \(path) declares no app") }
        let folder = (path as NSString).deletingLastPathComponent
        var apps: [APNsApp] = []
        for app in file.apps {
            let name = "the apps file \(path), app '\(app.id)'"
            guard app.id.wholeMatch(of: /[a-z0-9][a-z0-9-]{0,39}/) != nil else {
                throw ValidationError("\(name): an id is 1 to 40 lower-case letters, digits and '-'")
            }
            guard !apps.contains(where: { $0.id == app.id }) else { throw ValidationError("\(name): declared twice") }
            let topic: String
            do {
                topic = try Registrar.validated(topic: app.topic)
            } catch {
                throw ValidationError("\(name): topic \(error.reason) (the app's bundle id, as com.example.app)")
            }
            guard !apps.contains(where: { $0.topic == topic }) else {
                throw ValidationError("\(name): the topic \(topic) is another app's too")
            }
            let environment = try app.environment.map { text in
                guard let environment = APNsEnvironment(name: text) else {
                    throw ValidationError("\(name): environment must be \(APNsEnvironment.accepted), not '\(text)'")
                }
                return environment
            }
            var declared = APNsApp(id: app.id, topic: topic, environment: environment ?? .byDefault)
            if let key = app.apns {
                let file = key.key.hasPrefix("/") ? key.key : (folder as NSString).appendingPathComponent(key.key)
                do {
                    declared.key = try KeyFiles.readSigningKey(file)
                } catch {
                    throw ValidationError("\(name): \(error)")
                }
                declared.keyID = try ProviderOptions.appleID(key.keyID, "key id", "apns.key-id of \(app.id)")
                if let warning = ProviderOptions.keyFileMismatch(file, keyID: declared.keyID) {
                    StandardStreams.writeError("nohit: \(name): \(warning)\n")
                }
                declared.teamID = try ProviderOptions.appleID(key.teamID, "team id", "apns.team-id of \(app.id)")
            }
            if let origin = app.webOrigin {
                guard let normalized = webOrigin(origin) else {
                    throw ValidationError(
                        "\(name): web-origin must be an origin, https://host[:port] (http only for localhost), "
                            + "with no path, not '\(origin)'")
                }
                declared.webOrigin = normalized
            }
            apps.append(declared)
        }
        return apps
    }

    /// `https://Host:443/` as `https://host`: an origin as a browser sends it in `Origin`; nil
    /// when it is not one (a path, a query, a user, another scheme; http for a host other than
    /// localhost or a loopback address).
    static func webOrigin(_ text: String) -> String? {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
            let host = components.host?.lowercased(), !host.isEmpty,
            components.user == nil, components.password == nil, components.query == nil,
            components.fragment == nil, ["", "/"].contains(components.path)
        else { return nil }
        let local = host == "localhost" || host == "127.0.0.1" || host == "[::1]" || host == "::1"
        guard scheme == "https" || (scheme == "http" && local) else { return nil }
        let port = components.port.flatMap {
            ($0 == 443 && scheme == "https") || ($0 == 80 && scheme == "http") ? nil : $0
        }
        let shownHost = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        return "\(scheme)://\(shownHost)" + (port.map { ":\($0)" } ?? "")
    }
}
