import Alerts
import Baseball
import Delivery
import Foundation

/// The API's OpenAPI 3.1 document as `GET /openapi.json` serves it: the checked-in file
/// (`OpenAPI/openapi.json`) with the lists that live in code filled in — the club codes
/// `favourite_teams` takes (``MLBTeam/codes``) and the time zones quiet hours take
/// (``Preferences/timeZones``, this system's time-zone database), and the URLs the registrar takes
/// (``Registrar/urlPattern``) — so the document says exactly
/// what this server accepts, and the two cannot drift apart.
package enum OpenAPIDocument {
    /// The document as checked in; empty if the resource is missing (a broken build, which the
    /// tests catch).
    package static func checkedIn() -> [String: Any] {
        guard let url = Bundle.module.url(forResource: "OpenAPI/openapi", withExtension: "json"),
            let data = try? Data(contentsOf: url),
            let document = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { return [:] }
        return document
    }

    /// The paths in the order the checked-in file lists them (the parsed document keeps none):
    /// the reference's order, public first.
    package static func checkedInPathOrder() -> [String] {
        guard let url = Bundle.module.url(forResource: "OpenAPI/openapi", withExtension: "json"),
            let text = try? String(contentsOf: url, encoding: .utf8)
        else { return [] }
        return text.split(separator: "\n").compactMap { line in
            line.firstMatch(of: /^  "(\/[^"]*)": \{/).map { String($0.output.1) }
        }
    }

    /// The document served, as bytes (keys sorted).
    package static let served: [UInt8] = serialize(filled())

    /// The document served by a server with these deal rules (a device's `deals` and the
    /// history's `{rule}` take their ids) and these declared apps (an APNs device's `app` takes
    /// their ids, its `topic` their bundle ids; without apps it takes `topic` only).
    package static func served(ruleIDs: [String]?, apps: [String: String] = [:]) -> [UInt8] {
        var document = filled()
        fill(&document, ["components", "schemas", "DeviceRegistration"]) { registration in
            guard var variants = registration["oneOf"] as? [[String: Any]] else { return }
            let apple = ["apns", "live-activity", "live-activity-start"]
            for index in variants.indices where apple.contains(variants[index]["title"] as? String ?? "") {
                if apps.isEmpty {
                    fill(&variants[index], ["properties"]) { $0["app"] = nil }
                    variants[index]["anyOf"] = nil
                    variants[index]["not"] = nil
                    variants[index]["required"] = ["channel", "token", "topic"]
                } else {
                    fill(&variants[index], ["properties", "app"]) { $0["enum"] = apps.keys.sorted() }
                    fill(&variants[index], ["properties", "topic"]) { $0["enum"] = Set(apps.values).sorted() }
                }
            }
            registration["oneOf"] = variants
        }
        guard let ruleIDs else { return serialize(document) }
        let ids = Array(Set(ruleIDs)).sorted()
        fill(&document, ["components", "schemas", "Preferences", "properties", "deals", "items"]) { $0["enum"] = ids }
        fill(&document, ["paths", "/api/deals/{rule}/history", "get"]) { operation in
            guard var parameters = operation["parameters"] as? [[String: Any]] else { return }
            for index in parameters.indices where parameters[index]["name"] as? String == "rule" {
                fill(&parameters[index], ["schema"]) { $0["enum"] = ids }
            }
            operation["parameters"] = parameters
        }
        return serialize(document)
    }

    private static func serialize(_ document: [String: Any]) -> [UInt8] {
        Array(
            (try? JSONSerialization.data(withJSONObject: document, options: [.sortedKeys, .withoutEscapingSlashes]))
                ?? Data("{}".utf8))
    }

    /// The checked-in document with what the server takes filled in: clubs, time zones, URL
    /// patterns.
    private static func filled() -> [String: Any] {
        var document = checkedIn()
        fill(&document, ["components", "schemas", "Preferences", "properties", "favourite_teams", "items"]) {
            $0["enum"] = TeamDirectory.currentCodes
        }
        fill(
            &document,
            ["components", "schemas", "Preferences", "properties", "team_names", "items", "properties", "team"]
        ) {
            $0["enum"] = TeamDirectory.currentCodes
        }
        fill(
            &document, ["components", "schemas", "Preferences", "properties", "quiet_hours", "properties", "time_zone"]
        ) {
            $0["enum"] = Preferences.timeZones.sorted()
        }
        // The Metrics page's time zone: the same names.
        fill(&document, ["paths", "/api/admin/metrics", "get"]) { operation in
            guard var parameters = operation["parameters"] as? [[String: Any]] else { return }
            for index in parameters.indices where parameters[index]["name"] as? String == "timezone" {
                fill(&parameters[index], ["schema"]) { $0["enum"] = Preferences.timeZones.sorted() }
            }
            operation["parameters"] = parameters
        }
        fill(&document, ["components", "schemas", "DeviceRegistration"]) { registration in
            // Each channel's URL field takes what the registrar takes.
            guard var variants = registration["oneOf"] as? [[String: Any]] else { return }
            for index in variants.indices {
                for field in ["url", "endpoint"] {
                    fill(&variants[index], ["properties", field]) { $0["pattern"] = Registrar.urlPattern }
                }
            }
            registration["oneOf"] = variants
        }
        fill(&document, ["paths", "/api/widget", "get"]) { operation in
            // The clubs a widget's list takes, as a pattern (a list the pattern allows is
            // answered; the server also takes lower case and spaces).
            guard var parameters = operation["parameters"] as? [[String: Any]] else { return }
            for index in parameters.indices where parameters[index]["name"] as? String == "teams" {
                let club = "(" + TeamDirectory.currentCodes.joined(separator: "|") + ")"
                fill(&parameters[index], ["schema"]) { $0["pattern"] = "^$|^\(club)(,\(club)){0,29}$" }
            }
            operation["parameters"] = parameters
        }
        return document
    }

    /// Every operation the document lists (what 405 answers name, and what the tests hold the
    /// routes to).
    package static let operations: [(method: String, template: String)] = {
        guard let paths = checkedIn()["paths"] as? [String: [String: Any]] else { return [] }
        return paths.flatMap { path, item in item.keys.filter { $0 != "parameters" }.map { ($0, path) } }
    }()

    /// Changes the object at `path` (each step an object key), if the document has it.
    private static func fill(
        _ object: inout [String: Any], _ path: ArraySlice<String>, _ change: (inout [String: Any]) -> Void
    ) {
        guard let key = path.first else {
            change(&object)
            return
        }
        guard var inner = object[key] as? [String: Any] else { return }
        fill(&inner, path.dropFirst(), change)
        object[key] = inner
    }

    private static func fill(_ object: inout [String: Any], _ path: [String], _ change: (inout [String: Any]) -> Void) {
        fill(&object, path[...], change)
    }
}
