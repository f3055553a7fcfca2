/// The damaged records of a season that were read anyway, as `cwevent` reads them, counted by the
/// kind of record (`play`, `info`, …): what a season command says on standard error once every
/// game was read.
package struct ReadingWarnings: Sendable, Equatable {
    /// Warnings by record type, the first field of the line.
    package private(set) var byRecord: [String: Int] = [:]

    package init() {}

    package var total: Int { byRecord.values.reduce(0, +) }

    package mutating func add(_ warnings: [RetrosheetError]) {
        for warning in warnings {
            let record = warning.text.prefix { $0 != "," }
            byRecord[record.isEmpty ? "(empty)" : String(record), default: 0] += 1
        }
    }

    package mutating func add(_ other: ReadingWarnings) {
        byRecord.merge(other.byRecord, uniquingKeysWith: +)
    }

    /// `"16 damaged records read as cwevent reads them: 14 play, 2 info"`, or nil when none.
    package var summary: String? {
        guard total > 0 else { return nil }
        let kinds = byRecord.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.map { "\($0.value) \($0.key)" }
        return "\(total) damaged record\(total == 1 ? "" : "s") read as cwevent reads \(total == 1 ? "it" : "them"): "
            + kinds.joined(separator: ", ")
    }
}
