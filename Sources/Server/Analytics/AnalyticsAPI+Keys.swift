import Analytics
import Foundation
import Hummingbird
import JSON
import NIOCore
import Storage

/// Keen's access keys: the master key's endpoints that make, list, change and revoke scoped keys,
/// and the check every request passes (which key, which project, allowed to do what).
extension AnalyticsAPI {
    func addKeys(_ project: RouterGroup<APIRequestContext>) {
        project.post("keys") { request, context in
            await handle {
                let (id, _) = try await authorize(request, context, .master)
                let body = try Self.keyBody(try await withBody(request, context, upTo: Self.maximumQueryBody) { $0 })
                let (secret, key) = try await store.createAccessKey(
                    project: id, name: body.name, isActive: body.isActive, permitted: body.permitted,
                    options: body.options, now: clock.now())
                return Self.response(.created, body: Self.keyJSON(key, secret: secret))
            }
        }
        project.get("keys") { request, context in
            await handle {
                let (id, _) = try await authorize(request, context, .master)
                return Self.response(
                    .ok, body: .array(try await store.accessKeys(project: id).map { Self.keyJSON($0, secret: nil) }))
            }
        }
        project.get("keys/:key") { request, context in
            await handle {
                let (id, _) = try await authorize(request, context, .master)
                let secret = try context.parameters.require("key")
                guard let key = try await store.key(project: id, secret: secret), key.kind == .access else {
                    throw KeenError.notFound("no access key \(secret.prefix(6))… in project \(id)")
                }
                return Self.response(.ok, body: Self.keyJSON(key, secret: secret))
            }
        }
        project.post("keys/:key") { request, context in
            await handle {
                let (id, _) = try await authorize(request, context, .master)
                let secret = try context.parameters.require("key")
                let body = try Self.keyBody(try await withBody(request, context, upTo: Self.maximumQueryBody) { $0 })
                guard
                    let key = try await store.updateAccessKey(
                        project: id, secret: secret, name: body.name, isActive: body.isActive,
                        permitted: body.permitted,
                        options: body.options)
                else { throw KeenError.notFound("no access key \(secret.prefix(6))… in project \(id)") }
                return Self.response(.ok, body: Self.keyJSON(key, secret: secret))
            }
        }
        project.post("keys/:key/:action") { request, context in
            await handle {
                let (id, _) = try await authorize(request, context, .master)
                let secret = try context.parameters.require("key")
                let action = try context.parameters.require("action")
                guard action == "revoke" || action == "unrevoke" else {
                    throw KeenError.notFound("keys/{key}/\(action): revoke or unrevoke")
                }
                guard let current = try await store.key(project: id, secret: secret), current.kind == .access,
                    let key = try await store.updateAccessKey(
                        project: id, secret: secret, name: current.name, isActive: action == "unrevoke",
                        permitted: current.permitted, options: current.options)
                else { throw KeenError.notFound("no access key \(secret.prefix(6))… in project \(id)") }
                return Self.response(.ok, body: Self.keyJSON(key, secret: secret))
            }
        }
        project.delete("keys/:key") { request, context in
            await handle {
                let (id, _) = try await authorize(request, context, .master)
                let secret = try context.parameters.require("key")
                guard try await store.deleteAccessKey(project: id, secret: secret) else {
                    throw KeenError.notFound("no access key \(secret.prefix(6))… in project \(id)")
                }
                return Self.response(.noContent, body: nil)
            }
        }
    }

    // MARK: Keys

    /// The project and key a request names, if the key may do `operation` (401 otherwise).
    func authorize(
        _ request: Request, _ context: APIRequestContext, _ operation: AnalyticsKey.Operation
    ) async throws -> (String, AnalyticsKey) {
        let project = try context.parameters.require("project")
        let secret =
            request.headers[.authorization].flatMap { $0.isEmpty ? nil : $0 }
            ?? Self.query(request).first(where: { $0.name == "api_key" })?.value
        guard let secret, !secret.isEmpty else {
            throw KeenError.invalidKey("no API key: send the project's key in the Authorization header or as ?api_key=")
        }
        guard let key = try await store.key(project: project, secret: secret) else {
            throw KeenError.invalidKey("the API key is not a key of project \(project)")
        }
        guard key.isActive else { throw KeenError.invalidKey("the API key has been revoked") }
        guard key.allows(operation) else {
            let what =
                switch operation {
                case .writes: "write events"
                case .queries: "run queries"
                case .schema: "read the schema"
                case .savedQueries: "read saved queries' results (an access key needs saved_queries or cached_queries)"
                case .datasets: "read cached datasets (an access key needs datasets)"
                case .master: "do this (it needs the master key)"
                }
            throw KeenError.invalidKey("a \(key.kind.rawValue) key cannot \(what)")
        }
        return (project, key)
    }

    struct KeyBody {
        var name: String
        var isActive: Bool
        var permitted: [String]
        var options: JSONObject
    }

    static let permissions: Set<String> = [
        "writes", "queries", "saved_queries", "cached_queries", "datasets", "schema",
    ]

    static func keyBody(_ bytes: [UInt8]) throws -> KeyBody {
        guard case .object(let object)? = try? JSONValue.parse(bytes) else {
            throw KeenError.badParameter(
                "body", "an access key is {\"name\", \"is_active\", \"permitted\", \"options\"}")
        }
        guard let name = object["name"]?.string, !name.isEmpty else {
            throw KeenError.missingParameter("name", "for an access key")
        }
        let permitted = object["permitted"]?.array?.compactMap(\.string) ?? []
        for permission in permitted where !permissions.contains(permission) {
            throw KeenError.badParameter(
                "permitted", "'\(permission)' is not one of \(permissions.sorted().joined(separator: ", "))")
        }
        let options = object["options"]?.object ?? JSONObject()
        if let filters = options["queries"]?["filters"] { _ = try KeenFilter.parseList(filters) }
        if let autofill = options["writes"]?["autofill"], autofill.object == nil {
            throw KeenError.badParameter("options.writes.autofill", "must be an object of properties")
        }
        for kind in ["saved_queries", "cached_queries"] {
            guard let found = options[kind], found != .null else { continue }
            guard case .object = found else {
                throw KeenError.badParameter(
                    "options.\(kind)", "must be an object ({\"allowed\": [...], \"blocked\": [...]})")
            }
            for list in ["allowed", "blocked"] {
                guard let names = found[list], names != .null else { continue }
                guard let items = names.array, items.allSatisfy({ $0.string != nil }) else {
                    throw KeenError.badParameter("options.\(kind).\(list)", "must be a list of saved query names")
                }
            }
        }
        if case .bool(let active)? = object["is_active"] {
            return KeyBody(name: name, isActive: active, permitted: permitted, options: options)
        }
        return KeyBody(name: name, isActive: true, permitted: permitted, options: options)
    }

    static func keyJSON(_ key: AnalyticsKey, secret: String?) -> JSONValue {
        .object(
            JSONObject([
                ("key", secret.map { .string($0) } ?? .null), ("key_hint", .string(key.hint + "…")),
                ("name", .string(key.name)), ("is_active", .bool(key.isActive)),
                ("permitted", .array(key.permitted.map { .string($0) })), ("options", .object(key.options)),
                ("project_id", .string(key.project)),
                ("created_date", .string(KeenTime.format(Int64(key.createdAt.timeIntervalSince1970 * 1_000_000)))),
            ]))
    }
}
