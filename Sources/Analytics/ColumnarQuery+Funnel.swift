import Foundation
import JSON

extension ColumnarQuery {
    /// A funnel from its steps' collections' columns: who did each step, by the actor's number
    /// in its column, then the row engine's own arithmetic over them.
    public static func funnel(
        _ query: KeenQuery, on data: [String: CollectionColumns], projectPaths: [String],
        budget: QueryBudget = .unlimited
    ) throws -> JSONValue? {
        guard query.analysis.type == .funnel, let wanted = pathsByCollection(of: query) else { return nil }
        for (collection, paths) in wanted {
            guard let columns = data[collection] else { return nil }
            for path in paths {
                guard let column = columns.columns[path], !column.hasLists else { return nil }
            }
        }
        if query.steps.contains(where: { existsOnAnObject($0.filters, projectPaths: projectPaths) }) { return nil }
        try budget.check()
        var meter = QueryMeter(budget: budget)
        var done: [Set<FieldValue>] = []
        var visited = 0
        for step in query.steps {
            let columns = data[step.collection]!
            let timeframe = step.timeframe ?? .allTime
            let tests = step.filters.map { Test($0, columns: columns.columns) }
            var actors = Keys(columns.columns[step.actor]!)
            var bits = [UInt64](repeating: 0, count: (actors.strings + Keys.specials) / 64 + 1)
            var others = Set<Int32>()
            var selected = selection(timeframe, in: columns)
            try meter.charge(selected.count * 4 + bits.count * 8)
            visited += selected.count
            for test in tests {
                try test.narrow(&selected)
                try budget.check()
            }
            for row in selected {
                let key = actors.key(Int(row))
                if actors.isMissing(key) { continue }
                if Int(key) < actors.strings + Keys.specials {
                    bits[Int(key) / 64] |= UInt64(1) << UInt64(Int(key) % 64)
                } else {
                    others.insert(key)
                }
            }
            var did = Set<FieldValue>()
            for (word, value) in bits.enumerated() where value != 0 {
                for bit in 0..<64 where value & (UInt64(1) << UInt64(bit)) != 0 {
                    if let actor = actors.value(Int32(word * 64 + bit)) { did.insert(actor) }
                }
            }
            for key in others { if let actor = actors.value(key) { did.insert(actor) } }
            done.append(did)
        }
        budget.scanned(events: visited)
        return QueryEngine.funnelAnswer(query, done: done)
    }
}
