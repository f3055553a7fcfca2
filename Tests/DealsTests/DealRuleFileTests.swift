import Deals
import Foundation
import Testing

@Suite struct DealRuleFileTests {
    @Test func theShippedRulesLoad() throws {
        let rules = try DealRuleFile.load([DealRuleFile.shippedPath])
        #expect(Set(rules.map(\.id)).contains("papa-johns-dc-nationals"))
        #expect(rules.allSatisfy { !$0.sources.isEmpty })
    }
}
