import Foundation
import TestSupport
import Testing

/// What a bare clone's test run leaves out: the extended suites, which need the shared data.
@Suite struct ExtendedSuitesTests {
    /// Prints the one line naming the extended suites skipped, when the shared data is absent.
    @Test func aRunWithoutTheSharedDataSaysWhichSuitesItSkipped() {
        if !TestData.isSharedAvailable { print(ExtendedSuites.skipLine) }
        if !TestPostgres.isAvailable { print(TestPostgres.skipLine) }
        #expect(ExtendedSuites.skipLine.contains(ExtendedSuites.names.joined(separator: ", ")))
    }

    /// The list is the suites marked `.extended` in the sources, no more and no fewer.
    @Test func theListNamesEverySuiteMarkedExtended() throws {
        let tests = TestData.packageRoot.appendingPathComponent("Tests")
        var found: Set<String> = []
        let files = FileManager.default.enumerator(atPath: tests.path)?.compactMap { $0 as? String } ?? []
        for file in files where file.hasSuffix(".swift") {
            let target = String(file.split(separator: "/")[0])
            let text = try String(contentsOf: tests.appendingPathComponent(file), encoding: .utf8)
            var extended: String?
            for line in text.split(separator: "\n") {
                if line.hasPrefix("extension "), let name = line.dropFirst(10).split(separator: " ").first {
                    extended = String(name)
                } else if line.hasPrefix("@Suite") || line.hasPrefix("}") {
                    if line.hasPrefix("}") { extended = nil }
                }
                let code = line.drop { $0 == " " }
                guard code.hasPrefix("@Suite(.extended"), let start = code.range(of: ") struct ") else { continue }
                let name = code[start.upperBound...].split(separator: " ").first.map(String.init) ?? ""
                let outer = line.hasPrefix(" ") ? extended.map { "\($0)." } ?? "" : ""
                found.insert("\(target).\(outer)\(name)")
            }
        }
        #expect(found == Set(ExtendedSuites.names))
    }
}
