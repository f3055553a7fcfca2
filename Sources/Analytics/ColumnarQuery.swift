import Foundation
import JSON

/// Keen's aggregate analyses over a collection's columns (``CollectionColumns``) instead of its
/// rows: the time range by binary search over the ordered rows, filters by a table per string
/// (each filter decided once per distinct string, by the row engine's own test), groups and
/// distinct values by their numbers, medians by selection. The same answers as ``QueryEngine``
/// (the tests run both on the same events); what it does not cover (funnels, extractions, regex,
/// `contains`, `within`, lists, the `keen` columns, `exists` on an object) it declines (nil), and
/// the rows answer.
public enum ColumnarQuery {
    static let analyses: Set<AnalysisType> = [
        .count, .count_unique, .sum, .average, .minimum, .maximum, .median, .percentile, .standard_deviation,
        .select_unique,
    ]
    static let operators: Set<KeenFilter.Operator> = [.eq, .ne, .lt, .lte, .gt, .gte, .exists, .in, .or]

    /// The properties a query reads, by collection, when this executor can answer it; nil when it
    /// cannot.
    public static func pathsByCollection(of query: KeenQuery) -> [String: Set<String>]? {
        guard query.analysis.type == .funnel else {
            return query.collection.flatMap { collection in paths(of: query).map { [collection: $0] } }
        }
        var byCollection: [String: Set<String>] = [:]
        for step in query.steps {
            var paths: Set<String> = [step.actor]
            guard collect(step.filters, into: &paths), !paths.contains(where: { $0.hasPrefix("keen.") }) else {
                return nil
            }
            byCollection[step.collection, default: []].formUnion(paths)
        }
        return byCollection
    }

    /// Whether a filter asks `exists` of an object (a path with leaves under it among
    /// `projectPaths`): any of its leaves answers it, which only the rows can tell.
    static func existsOnAnObject(_ filters: [KeenFilter], projectPaths: [String]) -> Bool {
        filters.contains { filter in
            filter.op == .or
                ? existsOnAnObject(filter.operands, projectPaths: projectPaths)
                : filter.op == .exists && projectPaths.contains { $0.hasPrefix(filter.path + ".") }
        }
    }

    /// Adds the paths `filters` read to `paths`; false when one uses an operator this executor
    /// does not take.
    static func collect(_ filters: [KeenFilter], into paths: inout Set<String>) -> Bool {
        for filter in filters {
            guard operators.contains(filter.op) else { return false }
            if filter.op == .or {
                guard collect(filter.operands, into: &paths) else { return false }
            } else {
                paths.insert(filter.path)
            }
        }
        return true
    }

    /// The rows of `data` within `timeframe` in the table's order, `(timestamp, id)`: the ordered
    /// ones by binary search, the later ones sorted and merged in (so sums add in the order the
    /// rows do).
    static func selection(_ timeframe: Timeframe, in data: CollectionColumns) -> [Int32] {
        let (low, high) = range(of: timeframe, in: data)
        var late = (data.sorted..<data.count).filter { timeframe.contains(data.timestamps[$0]) }
        late.sort { (data.timestamps[$0], data.rowIDs[$0]) < (data.timestamps[$1], data.rowIDs[$1]) }
        var selected = [Int32]()
        selected.reserveCapacity(high - low + late.count)
        var next = 0
        for row in low..<high {
            while next < late.count,
                (data.timestamps[late[next]], data.rowIDs[late[next]]) < (data.timestamps[row], data.rowIDs[row])
            {
                selected.append(Int32(late[next]))
                next += 1
            }
            selected.append(Int32(row))
        }
        for row in late[next...] { selected.append(Int32(row)) }
        return selected
    }

    /// The ordered rows of `data` within `timeframe`, by binary search.
    static func range(of timeframe: Timeframe, in data: CollectionColumns) -> (Int, Int) {
        func firstAtOrAfter(_ time: Int64) -> Int {
            var (low, high) = (0, data.sorted)
            while low < high {
                let middle = (low + high) / 2
                if data.timestamps[middle] < time { low = middle + 1 } else { high = middle }
            }
            return low
        }
        let low = firstAtOrAfter(timeframe.start)
        return (low, max(low, firstAtOrAfter(timeframe.end)))
    }

    /// The properties `query` reads, when this executor can answer it; nil when it cannot.
    public static func paths(of query: KeenQuery) -> Set<String>? {
        guard query.collection != nil, query.analysis.type != .funnel else { return nil }
        let specs = query.analysis.type == .multi_analysis ? query.analyses.map(\.spec) : [query.analysis]
        guard specs.allSatisfy({ analyses.contains($0.type) }) else { return nil }
        var paths = Set<String>()
        guard collect(query.filters, into: &paths) else { return nil }
        for spec in specs { if let target = spec.target { paths.insert(target) } }
        paths.formUnion(query.groupBy)
        guard !paths.contains(where: { $0.hasPrefix("keen.") }) else { return nil }
        return paths
    }

    /// Answers `query` from `data`, or nil when it reads what the columns cannot answer.
    public static func run(
        _ query: KeenQuery, on data: CollectionColumns, projectPaths: [String], budget: QueryBudget = .unlimited
    ) throws -> JSONValue? {
        guard let wanted = paths(of: query) else { return nil }
        // A path with lists, or an `exists` on an object (its leaves are other paths), is the rows'.
        for path in wanted {
            guard let column = data.columns[path] else { return nil }
            if column.hasLists { return nil }
        }
        if existsOnAnObject(query.filters, projectPaths: projectPaths) { return nil }
        var meter = QueryMeter(budget: budget)
        try budget.check()
        let specs: [(label: String?, spec: AnalysisSpec)] =
            query.analysis.type == .multi_analysis
            ? query.analyses.map { ($0.label, $0.spec) } : [(nil, query.analysis)]
        let timeframe = query.timeframe ?? .allTime
        var buckets: [Int64] = []
        if let interval = query.interval { buckets = try interval.boundaries(of: timeframe, zone: query.zone) }
        let bucketCount = max(1, buckets.count - 1)

        // The rows in the timeframe: a range of the ordered ones, and the later ones that fall in it.
        let (low, high) = range(of: timeframe, in: data)
        let tests = query.filters.map { Test($0, columns: data.columns) }
        var groupKeys = query.groupBy.map { Keys(data.columns[$0]!) }
        var targetKeys = specs.map { spec -> Keys? in
            guard spec.spec.type == .count_unique || spec.spec.type == .select_unique, let target = spec.spec.target
            else { return nil }
            return Keys(data.columns[target]!)
        }
        let targets = specs.map { $0.spec.target.flatMap { data.columns[$0] } }

        // A plain count: the ordered rows in range by their positions, the later ones one by one.
        if specs.count == 1, specs[0].spec.type == .count, tests.isEmpty, groupKeys.isEmpty, buckets.isEmpty {
            let later = (data.sorted..<data.count).reduce(0) { $0 + (timeframe.contains(data.timestamps[$1]) ? 1 : 0) }
            budget.scanned(events: high - low + later)
            return .number(Double(high - low + later))
        }

        // Column at a time: the rows in range, narrowed by each filter in turn.
        var selected = selection(timeframe, in: data)
        try meter.charge(selected.count * 8)
        budget.scanned(events: selected.count)
        meter.rows += selected.count
        try budget.check()
        for test in tests {
            try test.narrow(&selected)
            try budget.check()
        }

        // Each row's cell: its bucket, then its group.
        var cellOf = [Int32](repeating: 0, count: selected.count)
        var keyOfCell: [[Int32]] = []
        if !buckets.isEmpty {
            var kept = 0
            data.timestamps.withUnsafeBufferPointer { stamps in
                for index in selected.indices {
                    let stamp = stamps[Int(selected[index])]
                    guard stamp >= buckets[0], stamp < buckets[buckets.count - 1] else { continue }
                    var lower = 0
                    var upper = buckets.count - 1
                    while upper - lower > 1 {
                        let middle = (lower + upper) / 2
                        if buckets[middle] <= stamp { lower = middle } else { upper = middle }
                    }
                    selected[kept] = selected[index]
                    cellOf[kept] = Int32(lower)
                    kept += 1
                }
            }
            selected.removeLast(selected.count - kept)
            cellOf.removeLast(cellOf.count - kept)
        }
        var cellCount = bucketCount
        if !groupKeys.isEmpty {
            // A cell per bucket and group, numbered as met.
            var index: [[Int32]: Int32] = [:]
            var flat: [Int32] = []
            var keys = [Int32](repeating: 0, count: groupKeys.count)
            let single = groupKeys.count == 1
            let width = single ? groupKeys[0].strings + Keys.specials : 0
            if single && bucketCount * width <= 1 << 22 { flat = Array(repeating: -1, count: bucketCount * width) }
            for position in selected.indices {
                let row = Int(selected[position])
                let bucket = cellOf[position]
                for group in groupKeys.indices { keys[group] = groupKeys[group].key(row) }
                if !flat.isEmpty, Int(keys[0]) < width {
                    let slot = Int(bucket) * width + Int(keys[0])
                    if flat[slot] < 0 {
                        flat[slot] = Int32(keyOfCell.count)
                        keyOfCell.append([bucket] + keys)
                    }
                    cellOf[position] = flat[slot]
                    continue
                }
                let full = [bucket] + keys
                if let known = index[full] {
                    cellOf[position] = known
                } else {
                    let cell = Int32(keyOfCell.count)
                    index[full] = cell
                    keyOfCell.append(full)
                    cellOf[position] = cell
                }
            }
            cellCount = keyOfCell.count
            // As the rows count them: every group of every bucket.
            guard cellCount <= QueryEngine.maximumGroups else {
                throw KeenError.tooMany(
                    "group_by makes more than \(QueryEngine.maximumGroups) groups; filter or group by fewer values")
            }
            try meter.charge(cellCount * (96 + 64 * specs.count))
        }
        try budget.check()

        // Each analysis over the rows, by cell.
        let fresh = specs.map { Cell(accumulator: QueryEngine.Accumulator($0.spec)) }
        var cells = [[Cell]](repeating: [], count: specs.count)
        for index in specs.indices {
            var mine = [Cell](repeating: fresh[index], count: cellCount)
            let type = specs[index].spec.type
            switch type {
            case .count:
                for cell in cellOf { mine[Int(cell)].count += 1 }
            case .count_unique, .select_unique:
                guard var keys = targetKeys[index] else { break }
                let limit = keys.strings + Keys.specials
                try meter.charge(cellCount * (limit / 8 + 8))
                for position in selected.indices {
                    let key = keys.key(Int(selected[position]))
                    if keys.isMissing(key) { continue }
                    let cell = Int(cellOf[position])
                    if Int(key) < limit {
                        if mine[cell].distinct.isEmpty {
                            mine[cell].distinct = Array(repeating: 0, count: limit / 64 + 1)
                        }
                        mine[cell].distinct[Int(key) / 64] |= UInt64(1) << UInt64(Int(key) % 64)
                    } else {
                        mine[cell].distinctSet.insert(key)
                    }
                }
                try meter.charge(mine.reduce(0) { $0 + $1.distinctSet.count * 32 })
                targetKeys[index] = keys
            case .median, .percentile:
                guard let column = targets[index] else { break }
                var gathered = 0
                column.kinds.withUnsafeBufferPointer { kinds in
                    column.numbers.withUnsafeBufferPointer { numbers in
                        for position in selected.indices {
                            let row = Int(selected[position])
                            guard kinds[row] == Column.Kind.number.rawValue else { continue }
                            mine[Int(cellOf[position])].samples.append(numbers[row])
                            gathered += 1
                        }
                    }
                }
                try meter.charge(gathered * 8)
            default:
                guard let column = targets[index] else { break }
                for position in selected.indices {
                    let row = Int(selected[position])
                    let cell = Int(cellOf[position])
                    if column.kinds[row] == Column.Kind.number.rawValue {
                        try mine[cell].accumulator.add(.number(column.numbers[row]), meter: &meter)
                    } else {
                        try mine[cell].accumulator.add(column.value(row), meter: &meter)
                    }
                }
            }
            cells[index] = mine
            try budget.check()
        }

        func result(_ cell: Cell, _ index: Int) -> JSONValue {
            let spec = specs[index].spec
            switch spec.type {
            case .count: return .number(Double(cell.count))
            case .count_unique:
                let bits = cell.distinct.reduce(0) { $0 + $1.nonzeroBitCount }
                return .number(Double(bits + cell.distinctSet.count))
            case .select_unique:
                guard let keys = targetKeys[index] else { return .array([]) }
                var values: [FieldValue] = []
                for (word, bits) in cell.distinct.enumerated() where bits != 0 {
                    for bit in 0..<64 where bits & (1 << UInt64(bit)) != 0 {
                        if let value = keys.value(Int32(word * 64 + bit)) { values.append(value) }
                    }
                }
                values += cell.distinctSet.compactMap { keys.value($0) }
                return .array(values.sorted().map(\.json))
            case .median, .percentile:
                var samples = cell.samples
                return percentileBySelection(&samples, spec.type == .median ? 50 : spec.percentile ?? 50)
                    .map(JSONValue.number) ?? .null
            default: return cell.accumulator.result
            }
        }
        var answerCells = Array(repeating: [(key: [FieldValue?], results: [JSONValue])](), count: bucketCount)
        if groupKeys.isEmpty {
            for bucket in 0..<bucketCount {
                answerCells[bucket] = [([], specs.indices.map { result(cells[$0][bucket], $0) })]
            }
        } else {
            for (cell, full) in keyOfCell.enumerated() {
                let key = groupKeys.indices.map { groupKeys[$0].value(full[$0 + 1]) }
                answerCells[Int(full[0])].append((key, specs.indices.map { result(cells[$0][cell], $0) }))
            }
        }
        return QueryEngine.answer(
            query, labels: specs.map(\.label), buckets: buckets, grouped: !groupKeys.isEmpty, cells: answerCells)
    }
}
