import Foundation
import JSON

/// Funnels (steps in order, actors carried from one to the next) and extractions.
extension QueryEngine {
    // MARK: Funnel

    static func funnel(
        _ query: KeenQuery, paths: [String], source: some EventSource, meter: inout QueryMeter
    ) throws -> JSONValue {
        // Who did each step: one scan for all the steps that read the same collection and
        // timeframe (a funnel's steps are often one collection under different filters).
        var done = Array(repeating: Set<FieldValue>(), count: query.steps.count)
        var scans: [ScanPlan: [Int]] = [:]
        var order: [ScanPlan] = []
        for (index, step) in query.steps.enumerated() {
            let plan = ScanPlan(collection: step.collection, timeframe: step.timeframe ?? .allTime)
            if scans[plan] == nil { order.append(plan) }
            scans[plan, default: []].append(index)
        }
        for plan in order {
            var reader = Reader(pathCount: paths.count)
            let steps = scans[plan]!.map { index in
                let filters = compile(query.steps[index].filters, reader: &reader, paths: paths)
                return (index: index, filters: filters, actor: reader.slot(query.steps[index].actor, paths: paths))
            }
            try source.scan(plan) { row in
                try meter.row()
                reader.read(row)
                steps: for step in steps {
                    for filter in step.filters where try !filter.matches(reader.values, meter: &meter) {
                        continue steps
                    }
                    if let actor = reader.values[step.actor], done[step.index].insert(actor).inserted {
                        try meter.charge(footprint(actor))
                    }
                }
                return true
            }
        }
        return funnelAnswer(query, done: done)
    }

    /// A funnel's answer from who did each step: each step reached by those who reached the
    /// steps before it (the optional ones aside) and did it (or, inverted, did not).
    static func funnelAnswer(_ query: KeenQuery, done: [Set<FieldValue>]) -> JSONValue {
        var running: Set<FieldValue>?
        var counts: [JSONValue] = []
        var actors: [JSONValue] = []
        var stepsOut: [JSONValue] = []
        for (step, did) in zip(query.steps, done) {
            let reached: Set<FieldValue>
            if step.inverted {
                reached = (running ?? []).subtracting(did)
            } else {
                reached = running.map { $0.intersection(did) } ?? did
            }
            counts.append(.number(Double(reached.count)))
            actors.append(step.withActors ? .array(reached.sorted().map(\.json)) : .null)
            if !step.optional { running = reached }
            stepsOut.append(
                .object(
                    JSONObject([
                        ("actor_property", .string(step.actor)), ("event_collection", .string(step.collection)),
                        ("timeframe", step.timeframeJSON), ("timezone", step.timezoneJSON),
                        ("filters", .array(step.filters.map(\.json))), ("optional", .bool(step.optional)),
                        ("inverted", .bool(step.inverted)), ("with_actors", .bool(step.withActors)),
                    ])))
        }
        var answer = JSONObject([("result", .array(counts)), ("steps", .array(stepsOut))])
        if query.steps.contains(where: \.withActors) { answer["actors"] = .array(actors) }
        return .object(answer)
    }

    // MARK: Extraction

    static func extraction(
        _ query: KeenQuery, paths: [String], source: some EventSource, meter: inout QueryMeter
    ) throws -> JSONValue {
        guard let collection = query.collection else { return .array([]) }
        var reader = Reader(pathCount: paths.count)
        let filters = compile(query.filters, reader: &reader, paths: paths)
        var scan = ScanPlan(collection: collection, timeframe: query.timeframe ?? .allTime)
        scan.newestFirst = query.latest != nil
        let limit = query.latest ?? maximumExtraction + 1
        var events: [JSONValue] = []
        try source.scan(scan) { row in
            try meter.row()
            if !filters.isEmpty {
                reader.read(row)
                for filter in filters where try !filter.matches(reader.values, meter: &meter) { return true }
            }
            // The event as JSON values takes a few times its stored bytes.
            try meter.charge(128 + 4 * row.data.count)
            let leaves = EventCodec.decode(row.data).map { leaf in
                EventLeaf(path: leaf.pathID < paths.count ? paths[leaf.pathID] : "?", value: leaf.value)
            }
            var event = KeenEventRules.rebuild(
                leaves: leaves, timestamp: row.timestamp, createdAt: row.createdAt, id: eventID(row.rowID))
            if let names = query.propertyNames { event = project(event, names) }
            events.append(event)
            return events.count < limit
        }
        if query.latest == nil && events.count > maximumExtraction {
            throw KeenError.tooMany(
                "the extraction holds more than \(maximumExtraction) events; narrow the timeframe or filter, or ask for the latest N"
            )
        }
        if query.latest != nil { events.reverse() }
        return .array(events)
    }

    /// The event with only the dotted paths `names`.
    static func project(_ event: JSONValue, _ names: [String]) -> JSONValue {
        var out = JSONObject()
        for name in names {
            var value: JSONValue? = event
            let parts = name.split(separator: ".").map(String.init)
            for part in parts { value = value?[part] }
            if let value { KeenEventRules.insert(value, at: parts[...], into: &out) }
        }
        return .object(out)
    }
}
