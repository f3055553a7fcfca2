import Deals
import Foundation
import Testing

@Suite struct DealRuleFileTests {
    @Test func theShippedRulesLoad() throws {
        let rules = try DealRuleFile.load([DealRuleFile.shippedPath])
        #expect(Set(rules.map(\.id)).contains("papa-johns-dc-nationals"))
        #expect(rules.allSatisfy { !$0.sources.isEmpty })
    }

    /// A number is a number: JSON's `true` is not a version 1.
    @Test func aBooleanIsNotAWholeNumber() throws {
        let text = try String(contentsOfFile: DealRuleFile.shippedPath, encoding: .utf8)
            .replacingOccurrences(of: #""version": 1,"#, with: #""version": true,"#)
        #expect(throws: DealRuleError.self) { try DealRuleFile.parse(Data(text.utf8), file: "rules.json") }
        do {
            _ = try DealRuleFile.parse(Data(text.utf8), file: "rules.json")
        } catch {
            #expect(error.description == #"rules.json: rule papa-johns-dc-nationals: "version" must be a whole number"#)
        }
    }
}
