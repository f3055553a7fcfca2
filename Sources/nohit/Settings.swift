import ArgumentParser
import Configuration
import Foundation
import SystemPackage

/// The service's settings, through swift-configuration. Each is read from its flag, then its
/// `NOHIT_...` environment variable (the key in capitals, `.` and `-` as `_`: `http.port` is
/// `NOHIT_HTTP_PORT`), then the JSON file named by `--config` or `$NOHIT_CONFIG` (the key as
/// nested objects: `{"http": {"port": 8080}}`), then the command's default.
///
/// A value that is there but wrong — `NOHIT_HTTP_PORT=eighty`, an unknown key in the file — is an
/// error naming the key and where it came from, never a silent fallback to the default.
struct Settings: Sendable {
    /// Every key the service reads, with its flag ("" for none). A file with any other key is
    /// refused.
    static let keys: [String: String] = Dictionary(
        uniqueKeysWithValues: reference.map { ($0.key, $0.flag.map { "--\($0)" } ?? "") })

    /// Keys whose values never appear in logs or errors.
    static let secrets: Set<String> = ["admin.token", "store.database", "feedback.secret"]

    private let reader: ConfigReader
    /// The file the settings came from, if any (for messages).
    let file: String?

    /// Reads the settings: `flags` (only those given on the command line) first, then the
    /// environment, then the file.
    static func load(
        flags: [String: ConfigContent], file: String?,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) async throws -> Settings {
        for key in flags.keys { precondition(keys[key] != nil, "\(key) is not a settings key") }
        UnknownVariables.warnOnce(environment, settings: Array(keys.keys))
        let path = file ?? environment["NOHIT_CONFIG"].flatMap { $0.isEmpty ? nil : $0 }
        var providers: [any ConfigProvider] = [
            InMemoryProvider(
                name: "flags",
                values: Dictionary(
                    uniqueKeysWithValues: flags.map {
                        (
                            AbsoluteConfigKey($0.key.split(separator: ".").map(String.init)),
                            ConfigValue($0.value, isSecret: secrets.contains($0.key))
                        )
                    })),
            EnvironmentVariablesProvider(
                environmentVariables: environment,
                secretsSpecifier: .specific(["NOHIT_ADMIN_TOKEN", "NOHIT_STORE_DATABASE", "NOHIT_FEEDBACK_SECRET"])
            ).prefixKeys(with: "nohit"),
        ]
        if let path {
            try checkFile(path)
            providers.append(try await FileProvider<JSONSnapshot>(filePath: FilePath(path)))
        }
        return Settings(reader: ConfigReader(providers: providers), file: path)
    }

    /// Refuses a file that is not a JSON object of known keys, naming the first unknown one.
    static func checkFile(_ path: String) throws {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw ValidationError("cannot read the configuration file \(path): \(error.localizedDescription)")
        }
        let root: Any
        do {
            root = try JSONSerialization.jsonObject(with: data)
        } catch {
            throw ValidationError("the configuration file \(path) is not JSON: \(jsonProblem(error, in: data))")
        }
        guard let object = root as? [String: Any] else {
            throw ValidationError("the configuration file \(path) must hold a JSON object")
        }
        if let problem = trailingComma(in: data) {
            throw ValidationError("the configuration file \(path) is not JSON: \(problem)")
        }
        func walk(_ object: [String: Any], prefix: String) throws {
            for (name, value) in object.sorted(by: { $0.key < $1.key }) {
                let key = prefix.isEmpty ? name : "\(prefix).\(name)"
                if keys[key] != nil { continue }
                if let nested = value as? [String: Any], keys.keys.contains(where: { $0.hasPrefix(key + ".") }) {
                    try walk(nested, prefix: key)
                } else {
                    throw ValidationError(
                        "the configuration file \(path) has an unknown setting '\(key)' (known: "
                            + keys.keys.sorted().joined(separator: ", ") + ")")
                }
            }
        }
        try walk(object, prefix: "")
    }

    /// Where `data` strays from JSON where Foundation's reader is lenient: a comma before a closing
    /// `}` or `]` (JSON has none; a file another tool reads would be refused there). Nil when none.
    static func trailingComma(in data: Data) -> String? {
        var inString = false
        var escaped = false
        var lastComma: Int?
        for (index, byte) in data.enumerated() {
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""):
                inString = true
                lastComma = nil
            case UInt8(ascii: ","):
                lastComma = index
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                if let comma = lastComma {
                    let before = data.prefix(comma)
                    let line = before.reduce(1) { $1 == 0x0A ? $0 + 1 : $0 }
                    let lineStart = before.lastIndex(of: 0x0A).map { $0 + 1 } ?? before.startIndex
                    let column = String(decoding: data[lineStart..<comma], as: UTF8.self).count + 1
                    return "line \(line), column \(column): a comma before '\(Character(UnicodeScalar(byte)))', "
                        + "which JSON does not allow"
                }
            case 0x20, 0x09, 0x0A, 0x0D:
                break
            default:
                lastComma = nil
            }
        }
        return nil
    }

    /// Where and what a JSON parser found wrong: "line 3, column 12: ..." (Foundation gives a
    /// character offset; an editor wants line and column).
    static func jsonProblem(_ error: any Error, in data: Data) -> String {
        if data.allSatisfy({ [0x20, 0x09, 0x0A, 0x0D].contains($0) }) {
            return "it is empty (a file of no settings holds {})"
        }
        let detail = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String ?? "\(error)"
        let offset: Int
        if let match = detail.firstMatch(of: /character (\d+)/), let at = Int(match.1) {
            offset = at
        } else if detail.lowercased().contains("end of file") {
            offset = data.count
        } else {
            return detail
        }
        let before = data.prefix(max(0, min(offset, data.count)))
        let line = before.reduce(1) { $1 == 0x0A ? $0 + 1 : $0 }
        let lineStart = before.lastIndex(of: 0x0A).map { $0 + 1 } ?? before.startIndex
        let column = String(decoding: data[lineStart..<before.endIndex], as: UTF8.self).count + 1
        var what = detail.replacing(/\s?around character \d+\.?/, with: "")
        if what.isEmpty { what = "not valid JSON" }
        if what.hasSuffix(".") { what.removeLast() }
        let text = String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        let shown = line <= text.count ? "\n  \(text[line - 1])\n  \(String(repeating: " ", count: column - 1))^" : ""
        return "line \(line), column \(column): \(what.prefix(1).lowercased() + what.dropFirst())\(shown)"
    }

    // MARK: Typed reads

    func string(_ key: String) throws -> String? {
        try read(key, "a string") { reader.string(forKey: $0) }
    }

    func string(_ key: String, default value: String) throws -> String { try string(key) ?? value }

    func int(_ key: String) throws -> Int? { try read(key, "an integer") { reader.int(forKey: $0) } }

    func int(_ key: String, default value: Int) throws -> Int { try int(key) ?? value }

    func double(_ key: String, default value: Double) throws -> Double {
        // An integer in the file (`"speed": 60`) is a number too.
        if let whole = reader.int(forKey: ConfigKey(components(key))) { return Double(whole) }
        return try read(key, "a number") { reader.double(forKey: $0) } ?? value
    }

    func bool(_ key: String, default value: Bool) throws -> Bool {
        try read(key, "true or false") { reader.bool(forKey: $0) } ?? value
    }

    func strings(_ key: String) throws -> [String]? {
        // The environment gives a comma-separated list; the file an array or one string.
        if let one = reader.string(forKey: ConfigKey(components(key))) {
            return one.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) }
        }
        return try read(key, "a list of strings") { reader.stringArray(forKey: $0) }
    }

    /// The value, nil when no source has the key, or an error when one has it in the wrong form.
    private func read<Value>(_ key: String, _ expected: String, _ get: (ConfigKey) -> Value?) throws -> Value? {
        precondition(Self.keys[key] != nil, "\(key) is not a settings key")
        let configKey = ConfigKey(components(key))
        if let value = get(configKey) { return value }
        guard isPresent(configKey) else { return nil }
        let shown = Self.secrets.contains(key) ? "" : " '\(describe(configKey))'"
        let flag = Self.keys[key]!
        throw ValidationError(
            "setting \(key) (\(flag.isEmpty ? "" : "\(flag), ")\(Self.environmentName(key))"
                + (file.map { ", or in \($0)" } ?? "") + ") must be \(expected), not\(shown)")
    }

    private func isPresent(_ key: ConfigKey) -> Bool {
        reader.string(forKey: key) != nil || reader.int(forKey: key) != nil || reader.double(forKey: key) != nil
            || reader.bool(forKey: key) != nil || reader.stringArray(forKey: key) != nil
            || reader.intArray(forKey: key) != nil
    }

    private func describe(_ key: ConfigKey) -> String {
        if let text = reader.string(forKey: key) { return text }
        if let number = reader.double(forKey: key) { return "\(number)" }
        if let flag = reader.bool(forKey: key) { return "\(flag)" }
        if let list = reader.stringArray(forKey: key) { return "\(list)" }
        return "?"
    }

    private func components(_ key: String) -> [String] { key.split(separator: ".").map(String.init) }

    /// `http.port` → `NOHIT_HTTP_PORT`.
    static func environmentName(_ key: String) -> String {
        "NOHIT_" + key.uppercased().map { $0.isLetter || $0.isNumber ? String($0) : "_" }.joined()
    }
}
