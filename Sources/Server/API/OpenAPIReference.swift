import Foundation

/// `docs/api.md`: the API reference, written from the OpenAPI document (`nohit openapi
/// --markdown`), so the page and what the server serves at `/openapi.json` cannot drift apart.
/// Every operation with its parameters, body and answers, then every schema with its fields.
package enum OpenAPIReference {
    package static func markdown(
        _ document: [String: Any] = OpenAPIDocument.checkedIn(),
        pathOrder: [String] = OpenAPIDocument.checkedInPathOrder()
    ) -> String {
        var writer = Writer(document: document, pathOrder: pathOrder)
        writer.write()
        return writer.text
    }

    private struct Writer {
        let document: [String: Any]
        /// The order of the paths (any not in it come after, sorted).
        let pathOrder: [String]
        var text = ""

        var components: [String: Any] { document["components"] as? [String: Any] ?? [:] }
        var schemas: [String: Any] { components["schemas"] as? [String: Any] ?? [:] }

        static let methods = ["get", "put", "post", "delete", "patch"]

        mutating func line(_ string: String = "") { text += string + "\n" }

        mutating func write() {
            let info = document["info"] as? [String: Any] ?? [:]
            line("# API reference")
            line()
            line(
                "Written from the server's OpenAPI \(document["openapi"] as? String ?? "3.1") document "
                    + "(`Sources/Server/OpenAPI/openapi.json`) by `nohit openapi --markdown`; a test keeps this "
                    + "page equal to it. A running server serves the document at `GET /openapi.json`, with the "
                    + "lists that live in code filled in: the club codes `favourite_teams` takes, the time zones "
                    + "of quiet hours, its deal rules and its declared apps.")
            line()
            if let description = info["description"] as? String { line(Self.escape(description)) }
            line()
            if let schemes = components["securitySchemes"] as? [String: Any], !schemes.isEmpty {
                line("## Authentication")
                line()
                for (name, value) in schemes.sorted(by: { $0.key < $1.key }) {
                    let scheme = value as? [String: Any] ?? [:]
                    let kind = [scheme["type"], scheme["scheme"]].compactMap { $0 as? String }.joined(separator: " ")
                    line(
                        "- **\(name)** (\(kind): `Authorization: Bearer …`): "
                            + Self.escape(scheme["description"] as? String ?? ""))
                }
                line()
            }
            let operations = self.operations()
            line("## Endpoints")
            line()
            line("| | |")
            line("|---|---|")
            for (method, path, operation) in operations {
                line(
                    "| [`\(method.uppercased()) \(path)`](#\(Self.anchor("\(method) \(path)"))) | "
                        + Self.cell(operation["summary"] as? String ?? "") + " |")
            }
            line()
            for (method, path, operation) in operations { write(method: method, path: path, operation) }
            line("## Schemas")
            line()
            for (name, schema) in schemas.sorted(by: { $0.key < $1.key }) {
                line("### \(name)")
                line()
                write(schema: schema as? [String: Any] ?? [:])
            }
        }

        /// Every operation, in the file's order of paths, then by method.
        func operations() -> [(String, String, [String: Any])] {
            let paths = document["paths"] as? [String: Any] ?? [:]
            let rank = Dictionary(pathOrder.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
            return paths.sorted {
                (rank[$0.key] ?? Int.max, $0.key) < (rank[$1.key] ?? Int.max, $1.key)
            }.flatMap { path, item in
                let item = item as? [String: Any] ?? [:]
                return Self.methods.compactMap { method in
                    (item[method] as? [String: Any]).map { (method, path, $0) }
                }
            }
        }

        mutating func write(method: String, path: String, _ operation: [String: Any]) {
            line("### \(method.uppercased()) \(path)")
            line()
            if let summary = operation["summary"] as? String {
                line(Self.escape(summary) + (summary.hasSuffix(".") ? "" : "."))
            }
            if let description = operation["description"] as? String {
                line()
                line(Self.escape(description))
            }
            line()
            if let security = operation["security"] as? [[String: Any]], !security.isEmpty {
                line("Needs " + security.flatMap(\.keys).sorted().map { "**\($0)**" }.joined(separator: " or ") + ".")
                line()
            }
            let parameters = (operation["parameters"] as? [Any] ?? []).compactMap { resolve($0) }
            if !parameters.isEmpty {
                line("| parameter | in | | type | |")
                line("|---|---|---|---|---|")
                for parameter in parameters {
                    let schema = parameter["schema"] as? [String: Any] ?? [:]
                    line(
                        "| `\(parameter["name"] as? String ?? "")` | \(parameter["in"] as? String ?? "") | "
                            + ((parameter["required"] as? Bool) == true ? "required" : "optional") + " | "
                            + Self.cell(describe(schema)) + " | "
                            + Self.cell(
                                (parameter["description"] as? String) ?? (schema["description"] as? String) ?? "")
                            + " |")
                }
                line()
            }
            if let body = resolve(operation["requestBody"] as Any) {
                let content = body["content"] as? [String: Any] ?? [:]
                for (type, media) in content.sorted(by: { $0.key < $1.key }) {
                    let schema = (media as? [String: Any])?["schema"] as? [String: Any] ?? [:]
                    line("Body (`\(type)`): " + self.describe(schema) + ".")
                    if schema["$ref"] == nil, schema["properties"] != nil {
                        line()
                        writeFields(schema)
                    }
                }
                line()
            }
            let responses = operation["responses"] as? [String: Any] ?? [:]
            line("| answer | | body |")
            line("|---|---|---|")
            for (status, value) in responses.sorted(by: { $0.key < $1.key }) {
                guard let response = resolve(value) else { continue }
                let content = response["content"] as? [String: Any] ?? [:]
                let bodies = content.sorted { $0.key < $1.key }.map { type, media in
                    let schema = (media as? [String: Any])?["schema"] as? [String: Any]
                    return schema.map { "`\(type)`: " + self.describe($0) } ?? "`\(type)`"
                }
                let headers = (response["headers"] as? [String: Any] ?? [:]).keys.sorted().map { "`\($0)` header" }
                line(
                    "| \(status) | " + Self.cell(response["description"] as? String ?? "") + " | "
                        + Self.cell((bodies + headers).joined(separator: "; ")) + " |")
            }
            line()
            // An answer's body written out in the operation (not a named schema): its fields.
            for (status, value) in responses.sorted(by: { $0.key < $1.key }) {
                let content = resolve(value)?["content"] as? [String: Any] ?? [:]
                for (_, media) in content.sorted(by: { $0.key < $1.key }) {
                    guard let schema = (media as? [String: Any])?["schema"] as? [String: Any],
                        schema["properties"] != nil
                    else { continue }
                    line("The \(status) answer's fields:")
                    line()
                    writeFields(schema)
                    line()
                }
            }
        }

        /// A schema's fields as a table, or its variants each with theirs.
        mutating func write(schema: [String: Any]) {
            if let description = schema["description"] as? String {
                line(Self.escape(description))
                line()
            }
            if let variants = schema["oneOf"] as? [[String: Any]] {
                for variant in variants {
                    let title = variant["title"] as? String ?? describe(variant)
                    line(
                        "**\(title)**" + ((variant["description"] as? String).map { ": " + Self.escape($0) } ?? ""))
                    line()
                    if variant["properties"] != nil { writeFields(variant) }
                    line()
                }
            } else if schema["properties"] != nil {
                writeFields(schema)
                line()
            } else {
                line("A " + describe(schema) + ".")
                line()
            }
        }

        mutating func writeFields(_ schema: [String: Any]) {
            line("| field | | type | |")
            line("|---|---|---|---|")
            writeRows(schema, prefix: "")
        }

        /// A field per row; an object written out in place (not a named schema) has its fields
        /// below it, as `outer.inner`, and so have an array's objects (`outer[].inner`).
        mutating func writeRows(_ schema: [String: Any], prefix: String) {
            let required = Set(schema["required"] as? [String] ?? [])
            for (name, value) in (schema["properties"] as? [String: Any] ?? [:]).sorted(by: { $0.key < $1.key }) {
                let property = value as? [String: Any] ?? [:]
                line(
                    "| `\(prefix)\(name)` | " + (required.contains(name) ? "required" : "") + " | "
                        + Self.cell(describe(property)) + " | "
                        + Self.cell(property["description"] as? String ?? "") + " |")
                if property["properties"] != nil {
                    writeRows(property, prefix: "\(prefix)\(name).")
                } else if let items = property["items"] as? [String: Any], items["properties"] != nil {
                    writeRows(items, prefix: "\(prefix)\(name)[].")
                }
            }
        }

        /// A parameter, body or response, its `$ref` followed.
        func resolve(_ value: Any) -> [String: Any]? {
            guard let object = value as? [String: Any] else { return nil }
            guard let reference = object["$ref"] as? String else { return object }
            var target: Any = document
            for part in reference.dropFirst(2).split(separator: "/") {
                target = (target as? [String: Any])?[String(part)] as Any
            }
            return target as? [String: Any]
        }

        /// A schema's type in words: a link for a named schema, the kind with its limits.
        func describe(_ schema: [String: Any]) -> String {
            if let reference = schema["$ref"] as? String {
                let name = reference.split(separator: "/").last.map(String.init) ?? reference
                return "[\(name)](#\(Self.anchor(name)))"
            }
            if let constant = schema["const"] { return "`\(Self.literal(constant))`" }
            if let values = schema["enum"] as? [Any] {
                return values.count > 12
                    ? "one of \(values.count) values"
                    : "one of " + values.map { "`\(Self.literal($0))`" }.joined(separator: ", ")
            }
            if let variants = (schema["oneOf"] ?? schema["anyOf"]) as? [[String: Any]] {
                return variants.map { describe($0) }.joined(separator: " or ")
            }
            var kinds: [String]
            switch schema["type"] {
            case let kind as String: kinds = [kind]
            case let several as [String]: kinds = several
            default: kinds = schema["properties"] != nil ? ["object"] : []
            }
            var words: [String] = []
            for kind in kinds {
                switch kind {
                case "array":
                    let items = schema["items"] as? [String: Any] ?? [:]
                    words.append("array of " + describe(items))
                default:
                    words.append(kind)
                }
            }
            var text = words.isEmpty ? "any" : words.joined(separator: " or ")
            var limits: [String] = []
            if let format = schema["format"] as? String { limits.append(format) }
            if let minimum = schema["minimum"], let maximum = schema["maximum"] {
                limits.append("\(Self.literal(minimum)) to \(Self.literal(maximum))")
            } else if let minimum = schema["minimum"] {
                limits.append("at least \(Self.literal(minimum))")
            } else if let maximum = schema["maximum"] {
                limits.append("at most \(Self.literal(maximum))")
            }
            if let length = schema["maxLength"] { limits.append("at most \(Self.literal(length)) characters") }
            if let items = schema["maxItems"] { limits.append("at most \(Self.literal(items)) items") }
            if let pattern = schema["pattern"] as? String { limits.append("matching `\(pattern)`") }
            if !limits.isEmpty { text += " (" + limits.joined(separator: ", ") + ")" }
            return text
        }

        static func literal(_ value: Any) -> String {
            switch value {
            case let string as String: string
            case let number as NSNumber:
                String(cString: number.objCType) == "c" ? (number.boolValue ? "true" : "false") : "\(number)"
            case is NSNull: "null"
            default: "\(value)"
            }
        }

        /// GitHub's heading anchor: lower-cased, punctuation other than `-` and `_` dropped,
        /// spaces as `-`.
        static func anchor(_ heading: String) -> String {
            String(
                heading.lowercased().compactMap { character -> Character? in
                    if character == " " { return "-" }
                    return character.isLetter || character.isNumber || character == "-" || character == "_"
                        ? character : nil
                })
        }

        /// Text for a Markdown paragraph: angle brackets shown as written, not read as HTML.
        static func escape(_ text: String) -> String {
            text.replacing("<", with: "&lt;").replacing(">", with: "&gt;")
        }

        /// Text for a table cell: one line, pipes escaped.
        static func cell(_ text: String) -> String {
            escape(text).replacing("|", with: "\\|").replacing("\n", with: " ")
        }
    }
}
