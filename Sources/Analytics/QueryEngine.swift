import Foundation
import JSON

/// Keen's analyses over an ``EventSource``, pure apart from it: the same query over the same
/// events gives the same answer.
public enum QueryEngine {
    /// Extractions answer at most this many events (Keen's own limit for a synchronous one).
    public static let maximumExtraction = 100_000
    /// `group_by` answers at most this many groups per interval.
    public static let maximumGroups = 100_000

    /// Runs `query` over `source` within `budget`: past its time or memory the query stops
    /// itself with Keen's error (checked inside the scan, between rows and inside a regex).
    public static func run(_ query: KeenQuery, on source: some EventSource, budget: QueryBudget = .unlimited) throws
        -> JSONValue
    {
        let paths = try source.paths()
        var meter = QueryMeter(budget: budget)
        try budget.check()
        defer { budget.scanned(events: meter.rows) }
        switch query.analysis.type {
        case .funnel: return try funnel(query, paths: paths, source: source, meter: &meter)
        case .extraction: return try extraction(query, paths: paths, source: source, meter: &meter)
        default: return try aggregate(query, paths: paths, source: source, meter: &meter)
        }
    }

    /// Bytes a value held in a query's state takes, roughly (what the memory budget counts).
    static func footprint(_ value: FieldValue?) -> Int {
        switch value {
        case .string(let text)?: 48 + text.utf8.count
        case .list(let values)?: 48 + values.reduce(0) { $0 + $1.jsonBytes.count }
        default: 32
        }
    }

    // MARK: Field reading

    /// Which leaves a scan reads, into which slots; the `keen` columns are slots too.
    struct Reader {
        var slots: [Int32]
        var count = 0
        var virtual: [(slot: Int, column: String)] = []
        var values: [FieldValue?] = []
        var bySlotPath: [String: Int] = [:]
        /// Paths read into more than one slot (a property a query both tests with `exists` and
        /// reads, say): read into a slot of their own, then copied into each of `consumers`.
        var shared: [(id: Int, consumers: [Int])] = []

        init(pathCount: Int) { slots = Array(repeating: -1, count: pathCount) }

        /// The slot of `path`; `prefix` also maps nested paths (for `exists` on an object).
        mutating func slot(_ path: String, paths: [String], prefix: Bool = false) -> Int {
            let key = prefix ? path + ".*" : path
            if let slot = bySlotPath[key] { return slot }
            let slot = count
            count += 1
            bySlotPath[key] = slot
            if ["keen.timestamp", "keen.created_at", "keen.id"].contains(path) {
                virtual.append((slot, path))
            }
            for (id, name) in paths.enumerated()
            where name == path || (prefix && name.hasPrefix(path + ".")) {
                if slots[id] < 0 {
                    slots[id] = Int32(slot)
                } else if let index = shared.firstIndex(where: { $0.id == id }) {
                    shared[index].consumers.append(slot)
                } else {
                    // A second slot wants this path: it gets one of its own, copied into both.
                    let own = count
                    count += 1
                    shared.append((id, [Int(slots[id]), slot]))
                    slots[id] = Int32(own)
                }
            }
            return slot
        }

        mutating func read(_ row: EventRow) {
            if values.count != count { values = Array(repeating: nil, count: count) }
            EventCodec.read(row.data, slots: slots, into: &values)
            for (id, consumers) in shared {
                guard let value = values[Int(slots[id])] else { continue }
                for consumer in consumers { values[consumer] = value }
            }
            for (slot, column) in virtual {
                switch column {
                case "keen.timestamp": values[slot] = .string(KeenTime.format(row.timestamp))
                case "keen.created_at": values[slot] = .string(KeenTime.format(row.createdAt))
                default: values[slot] = .string(eventID(row.rowID))
                }
            }
        }
    }

    /// The event's `keen.id`: its row number, 24 hex digits.
    public static func eventID(_ rowID: Int64) -> String {
        let hex = String(UInt64(bitPattern: rowID), radix: 16)
        return String(repeating: "0", count: max(0, 24 - hex.count)) + hex
    }

    /// A filter compiled against slots.
    struct CompiledFilter {
        var slot: Int
        var filter: KeenFilter
        var regex: LinearRegex.Matcher?
        var set: Set<FieldValue> = []
        /// An "or" filter's operands.
        var operands: [CompiledFilter] = []

        /// Whether the values pass; a regex's work goes on `meter` (it may stop the query).
        func matches(_ values: [FieldValue?], meter: inout QueryMeter) throws(KeenError) -> Bool {
            if filter.op == .or {
                for operand in operands where try operand.matches(values, meter: &meter) { return true }
                return false
            }
            guard filter.op == .regex else { return matches(values) }
            guard case .string(let text)? = values[slot], let regex else { return false }
            var steps = 0
            let found = regex.matches(text, steps: &steps)
            try meter.tick(steps)
            return found
        }

        func matches(_ values: [FieldValue?]) -> Bool {
            if filter.op == .or { return operands.contains { $0.matches(values) } }
            let value = values[slot]
            switch filter.op {
            case .or: return false
            case .exists:
                return (value != nil) == (filter.value == .bool(true))
            case .eq:
                guard let value else { return false }
                return Self.equal(value, filter.value)
            case .ne:
                guard let value else { return false }
                return !Self.equal(value, filter.value)
            case .in:
                guard let value else { return false }
                if case .list(let elements) = value { return elements.contains { set.contains(FieldValue($0)) } }
                return set.contains(value)
            case .lt, .lte, .gt, .gte:
                guard let value, let order = Self.compare(value, filter.value) else { return false }
                switch filter.op {
                case .lt: return order < 0
                case .lte: return order <= 0
                case .gt: return order > 0
                default: return order >= 0
                }
            case .contains, .not_contains:
                guard let value, let needle = filter.value.string else { return false }
                let found: Bool
                switch value {
                case .string(let text): found = text.contains(needle)
                case .list(let elements): found = elements.contains(.string(needle))
                default: return false
                }
                return found == (filter.op == .contains)
            case .regex:
                guard case .string(let text)? = value, let regex else { return false }
                var steps = 0
                return regex.matches(text, steps: &steps)
            case .within:
                guard case .list(let point)? = value, point.count == 2, let longitude = point[0].number,
                    let latitude = point[1].number, let center = filter.value["coordinates"]?.array,
                    let centerLongitude = center[0].number, let centerLatitude = center[1].number,
                    let miles = filter.value["max_distance_miles"]?.number
                else { return false }
                return Self.miles(latitude, longitude, centerLatitude, centerLongitude) <= miles
            }
        }

        static func equal(_ value: FieldValue, _ operand: JSONValue) -> Bool {
            if case .list(let elements) = value, operand.array == nil { return elements.contains(operand) }
            return value == FieldValue(operand)
        }

        static func compare(_ value: FieldValue, _ operand: JSONValue) -> Int? {
            switch (value, operand) {
            case (.number(let a), .number(let b)): return a < b ? -1 : a > b ? 1 : 0
            case (.string(let a), .string(let b)): return a < b ? -1 : a > b ? 1 : 0
            default: return nil
            }
        }

        /// Great-circle distance in miles (haversine, mean Earth radius 3,958.8 mi).
        static func miles(_ lat1: Double, _ lon1: Double, _ lat2: Double, _ lon2: Double) -> Double {
            let radians = Double.pi / 180
            let dLat = (lat2 - lat1) * radians
            let dLon = (lon2 - lon1) * radians
            let a =
                sin(dLat / 2) * sin(dLat / 2) + cos(lat1 * radians) * cos(lat2 * radians) * sin(dLon / 2)
                * sin(dLon / 2)
            return 2 * 3958.8 * asin(min(1, sqrt(a)))
        }
    }

    static func compile(_ filters: [KeenFilter], reader: inout Reader, paths: [String]) -> [CompiledFilter] {
        filters.map { filter in
            if filter.op == .or {
                return CompiledFilter(
                    slot: -1, filter: filter, operands: compile(filter.operands, reader: &reader, paths: paths))
            }
            var compiled = CompiledFilter(
                slot: reader.slot(filter.path, paths: paths, prefix: filter.op == .exists), filter: filter)
            if filter.op == .regex, let pattern = filter.value.string {
                compiled.regex = (try? LinearRegex(pattern))?.matcher()
            }
            if filter.op == .in, let values = filter.value.array { compiled.set = Set(values.map(FieldValue.init)) }
            return compiled
        }
    }

    // MARK: Aggregates

    /// One analysis' running state.
    struct Accumulator {
        let spec: AnalysisSpec
        var count = 0
        var sum = 0.0
        var numbers = 0
        var minimum = Double.infinity
        var maximum = -Double.infinity
        var samples: [Double] = []
        var distinct: Set<FieldValue> = []
        /// Welford's running mean and sum of squared differences from it (standard_deviation).
        var mean = 0.0
        var squares = 0.0

        init(_ spec: AnalysisSpec) { self.spec = spec }

        mutating func add(_ value: FieldValue?, meter: inout QueryMeter) throws(KeenError) {
            switch spec.type {
            case .count: count += 1
            case .count_unique, .select_unique:
                if let value, distinct.insert(value).inserted { try meter.charge(QueryEngine.footprint(value)) }
            case .sum, .average, .minimum, .maximum, .median, .percentile, .standard_deviation:
                guard case .number(let number)? = value else { return }
                numbers += 1
                sum += number
                if spec.type == .standard_deviation {
                    let delta = number - mean
                    mean += delta / Double(numbers)
                    squares += delta * (number - mean)
                }
                minimum = Swift.min(minimum, number)
                maximum = Swift.max(maximum, number)
                if spec.type == .median || spec.type == .percentile {
                    samples.append(number)
                    try meter.charge(8)
                }
            default: break
            }
        }

        var result: JSONValue {
            switch spec.type {
            case .count: return .number(Double(count))
            case .count_unique: return .number(Double(distinct.count))
            case .select_unique: return .array(distinct.sorted().map(\.json))
            case .sum: return .number(sum)
            case .average: return numbers == 0 ? .null : .number(sum / Double(numbers))
            case .minimum: return numbers == 0 ? .null : .number(minimum)
            case .maximum: return numbers == 0 ? .null : .number(maximum)
            case .median: return QueryEngine.percentile(samples, 50).map(JSONValue.number) ?? .null
            case .percentile:
                return QueryEngine.percentile(samples, spec.percentile ?? 50).map(JSONValue.number) ?? .null
            case .standard_deviation:
                // The sample standard deviation (n - 1), as SQL's stddev: none below two values.
                return numbers < 2 ? .null : .number((squares / Double(numbers - 1)).squareRoot())
            default: return .null
            }
        }
    }

    /// The `p`th percentile by linear interpolation between the closest ranks (the median of an
    /// even count is the mean of the middle two); nil for no values.
    public static func percentile(_ values: [Double], _ p: Double) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let rank = p / 100 * Double(sorted.count - 1)
        let lower = Int(rank.rounded(.down))
        let upper = Swift.min(lower + 1, sorted.count - 1)
        return sorted[lower] + (sorted[upper] - sorted[lower]) * (rank - Double(lower))
    }

    static func aggregate(
        _ query: KeenQuery, paths: [String], source: some EventSource, meter: inout QueryMeter
    ) throws -> JSONValue {
        guard let collection = query.collection else { return .null }
        let specs: [(label: String?, spec: AnalysisSpec)] =
            query.analysis.type == .multi_analysis
            ? query.analyses.map { ($0.label, $0.spec) } : [(nil, query.analysis)]
        let timeframe = query.timeframe ?? .allTime
        let scan = ScanPlan(collection: collection, timeframe: timeframe)
        var buckets: [Int64] = []
        if let interval = query.interval { buckets = try interval.boundaries(of: timeframe, zone: query.zone) }
        let bucketCount = max(1, buckets.count - 1)

        // A plain count asks the database alone.
        if specs.count == 1, specs[0].spec.type == .count, query.filters.isEmpty, query.groupBy.isEmpty,
            query.interval == nil
        {
            // Counted from the index: each event counts as scanned, none of its properties read.
            let count = try source.count(scan)
            meter.rows += count
            return .number(Double(count))
        }

        var reader = Reader(pathCount: paths.count)
        let filters = compile(query.filters, reader: &reader, paths: paths)
        let targetSlots = specs.map { $0.spec.target.map { reader.slot($0, paths: paths) } }
        let groupSlots = query.groupBy.map { reader.slot($0, paths: paths) }
        let fresh = specs.map { Accumulator($0.spec) }
        // Per bucket: the accumulators of the whole bucket, or of each group in it.
        var totals = Array(repeating: fresh, count: bucketCount)
        var groups = Array(repeating: [[FieldValue?]: [Accumulator]](), count: bucketCount)
        var groupCount = 0
        try source.scan(scan) { row in
            try meter.row()
            reader.read(row)
            for filter in filters where try !filter.matches(reader.values, meter: &meter) { return true }
            var bucket = 0
            if !buckets.isEmpty {
                // The last boundary at or before the event.
                var low = 0
                var high = buckets.count - 1
                while high - low > 1 {
                    let middle = (low + high) / 2
                    if buckets[middle] <= row.timestamp { low = middle } else { high = middle }
                }
                guard row.timestamp >= buckets[0], row.timestamp < buckets[buckets.count - 1] else { return true }
                bucket = low
            }
            if groupSlots.isEmpty {
                for index in specs.indices {
                    try totals[bucket][index].add(targetSlots[index].flatMap { reader.values[$0] }, meter: &meter)
                }
            } else {
                let key = groupSlots.map { reader.values[$0] }
                if groups[bucket][key] == nil {
                    groupCount += 1
                    guard groupCount <= maximumGroups else {
                        throw KeenError.tooMany(
                            "group_by makes more than \(maximumGroups) groups; filter or group by fewer values")
                    }
                    groups[bucket][key] = fresh
                    try meter.charge(96 + key.reduce(0) { $0 + footprint($1) } + 64 * specs.count)
                }
                for index in specs.indices {
                    try groups[bucket][key]![index].add(
                        targetSlots[index].flatMap { reader.values[$0] }, meter: &meter)
                }
            }
            return true
        }

        let cells: [[(key: [FieldValue?], results: [JSONValue])]] = (0..<bucketCount).map { bucket in
            groupSlots.isEmpty
                ? [([], totals[bucket].map(\.result))]
                : groups[bucket].map { ($0.key, $0.value.map(\.result)) }
        }
        return answer(query, labels: specs.map(\.label), buckets: buckets, grouped: !groupSlots.isEmpty, cells: cells)
    }

    /// An aggregate query's answer from each bucket's cells (one per group, or one with no key when
    /// the query has no group_by), each with its analyses' results: Keen's shape, groups in order
    /// of their keys then `order_by`, `limit` applied, buckets with their timeframes.
    static func answer(
        _ query: KeenQuery, labels: [String?], buckets: [Int64], grouped: Bool,
        cells: [[(key: [FieldValue?], results: [JSONValue])]]
    ) -> JSONValue {
        func value(_ results: [JSONValue]) -> JSONValue {
            guard query.analysis.type == .multi_analysis else { return results[0] }
            return .object(JSONObject(zip(labels, results).map { ($0 ?? "", $1) }))
        }
        func groupedAnswer(_ bucket: Int) -> JSONValue {
            var rows: [(key: [FieldValue?], result: JSONValue)] = cells[bucket].map { ($0.key, value($0.results)) }
            rows.sort { a, b in
                for (x, y) in zip(a.key, b.key) where x != y {
                    return (x ?? .null) < (y ?? .null) || (x == nil && y != nil)
                }
                return false
            }
            for order in query.orderBy.reversed() {
                rows = stableSorted(rows) { a, b in
                    let (x, y): (JSONValue, JSONValue)
                    if let index = query.groupBy.firstIndex(of: order.property) {
                        (x, y) = (a.key[index]?.json ?? .null, b.key[index]?.json ?? .null)
                    } else if order.property == "result" {
                        (x, y) = (a.result, b.result)
                    } else {
                        (x, y) = (a.result[order.property] ?? .null, b.result[order.property] ?? .null)
                    }
                    return order.descending ? jsonLess(y, x) : jsonLess(x, y)
                }
            }
            if let limit = query.limit { rows = Array(rows.prefix(limit)) }
            return .array(
                rows.map { row in
                    var object = JSONObject()
                    for (name, value) in zip(query.groupBy, row.key) { object[name] = value?.json ?? .null }
                    if query.analysis.type == .multi_analysis, case .object(let results) = row.result {
                        for member in results.members { object[member.key] = member.value }
                    } else {
                        object["result"] = row.result
                    }
                    return .object(object)
                })
        }
        func bucketValue(_ bucket: Int) -> JSONValue {
            grouped ? groupedAnswer(bucket) : value(cells[bucket].first?.results ?? [])
        }
        if buckets.isEmpty { return bucketValue(0) }
        return .array(
            (0..<(buckets.count - 1)).map { bucket in
                [
                    "value": bucketValue(bucket),
                    "timeframe": Timeframe(start: buckets[bucket], end: buckets[bucket + 1]).json(zone: query.zone),
                ]
            })
    }

    static func stableSorted<T>(_ items: [T], by less: (T, T) -> Bool) -> [T] {
        items.enumerated().sorted { a, b in
            less(a.element, b.element) || (!less(b.element, a.element) && a.offset < b.offset)
        }.map(\.element)
    }

    static func jsonLess(_ a: JSONValue, _ b: JSONValue) -> Bool {
        FieldValue(a) < FieldValue(b)
    }

}

extension QueryEngine {
    /// The rows of `collection` in `timeframe` that pass `filters` (for deletion).
    public static func matchingRows(
        collection: String, timeframe: Timeframe?, filters: [KeenFilter], on source: some EventSource,
        budget: QueryBudget = .unlimited
    ) throws -> [(timestamp: Int64, id: Int64)] {
        let paths = try source.paths()
        var reader = Reader(pathCount: paths.count)
        var meter = QueryMeter(budget: budget)
        let filters = compile(filters, reader: &reader, paths: paths)
        var rows: [(timestamp: Int64, id: Int64)] = []
        try source.scan(ScanPlan(collection: collection, timeframe: timeframe ?? .allTime)) { row in
            try meter.row()
            reader.read(row)
            for filter in filters where try !filter.matches(reader.values, meter: &meter) { return true }
            rows.append((row.timestamp, row.rowID))
            try meter.charge(16)
            return true
        }
        return rows
    }
}
