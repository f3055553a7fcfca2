import Foundation
import Testing

/// The PostgreSQL server the PostgreSQL suites use: `$NOHIT_TEST_POSTGRES`, a `postgres://` URL
/// (`eval "$(.ci/postgres start)"` starts a throwaway one on loopback and sets it; CI does). Without
/// it those suites are skipped, and the run says so in one line.
package enum TestPostgres {
    package static let url: String? = {
        let value = ProcessInfo.processInfo.environment["NOHIT_TEST_POSTGRES"] ?? ""
        return value.isEmpty ? nil : value
    }()

    package static var isAvailable: Bool { url != nil }

    /// The suites (and the contract suites' PostgreSQL cases) that need it.
    package static let suites = [
        "StorageTests.*ContractTests (their PostgreSQL cases)",
        "StorageTests.PostgresStoreTests",
        "NoHitCLITests.InstancesTests",
    ]

    /// The line a test run prints when no PostgreSQL server is given.
    package static var skipLine: String {
        "PostgreSQL suites skipped (NOHIT_TEST_POSTGRES is not set; `eval \"$(.ci/postgres start)\"` starts a "
            + "throwaway server and sets it): \(suites.joined(separator: ", "))"
    }

    /// The URL with a schema of its own, named after `purpose` and a random part, so tests sharing
    /// the server never see each other's tables.
    package static func url(schema purpose: String) -> String? {
        guard let url else { return nil }
        let name =
            "t_" + purpose.lowercased().filter { $0.isLetter || $0.isNumber }.prefix(20) + "_"
            + UUID().uuidString.prefix(8).lowercased()
        return url + (url.contains("?") ? "&" : "?") + "schema=\(name)"
    }
}

extension Trait where Self == ConditionTrait {
    /// A suite or test that needs a PostgreSQL server (`$NOHIT_TEST_POSTGRES`); skipped without it.
    package static var postgres: Self {
        .enabled(if: TestPostgres.isAvailable, "needs a PostgreSQL server: NOHIT_TEST_POSTGRES")
    }
}
