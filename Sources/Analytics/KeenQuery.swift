import Foundation
import JSON

/// Keen's analyses.
public enum AnalysisType: String, Sendable, CaseIterable {
    case count, count_unique, sum, average, minimum, maximum, median, percentile, standard_deviation, select_unique,
        extraction, funnel, multi_analysis

    /// Whether the analysis reads `target_property`.
    var needsTarget: Bool {
        switch self {
        case .count, .extraction, .funnel, .multi_analysis: false
        default: true
        }
    }
}

/// A filter: `{"property_name": "a.b", "operator": "eq", "property_value": ...}`, or Keen's "or"
/// filter, `{"operator": "or", "operands": [filter, ...]}`: an event passes when any operand
/// passes (an operand may be an "or" filter itself; the filters of a list must all pass).
public struct KeenFilter: Sendable, Hashable {
    public enum Operator: String, Sendable, CaseIterable {
        case eq, ne, lt, lte, gt, gte, exists, `in`, contains, not_contains, within, regex, or
    }

    public var path: String
    public var op: Operator
    public var value: JSONValue
    /// An "or" filter's filters (empty for any other).
    public var operands: [KeenFilter]

    public init(path: String, op: Operator, value: JSONValue) {
        self.path = path
        self.op = op
        self.value = value
        operands = []
    }

    /// An "or" filter of `operands`.
    public init(or operands: [KeenFilter]) {
        path = ""
        op = .or
        value = .null
        self.operands = operands
    }

    /// How deep "or" filters may nest (a list's filter is depth 1).
    public static let maximumDepth = 4
    /// How many operands an "or" filter may have.
    public static let maximumOperands = 100

    public static func parseList(_ value: JSONValue?) throws(KeenError) -> [KeenFilter] {
        switch value {
        case nil, .null?: return []
        case .array(let items)?:
            var filters: [KeenFilter] = []
            for (index, item) in items.enumerated() {
                filters.append(try parse(item, index: index, at: "", depth: 1))
            }
            return filters
        case let other?:
            throw .badParameter("filters", "must be a list of filters, not \(other.typeName)")
        }
    }

    /// The filter `item`, the `index`th of its list; `at` names an operand's place within it
    /// (".operands[2]") for the error.
    static func parse(_ item: JSONValue, index: Int, at place: String, depth: Int) throws(KeenError) -> KeenFilter {
        func fail(_ why: String) -> KeenError { .filter(index, place.isEmpty ? why : "\(place.dropFirst()): \(why)") }
        guard case .object = item else { throw fail("a filter is an object, not \(item.typeName)") }
        guard let name = item["operator"]?.string else { throw fail("needs an operator") }
        guard let op = Operator(rawValue: name) else {
            throw fail("'\(name)' is not an operator (\(Operator.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        if op == .or {
            // Keen's form is `operands`; `property_value` holding the list is read the same.
            let list = item["operands"].flatMap { $0 == .null ? nil : $0 } ?? item["property_value"]
            guard let operands = list?.array, !operands.isEmpty else {
                throw fail("or takes operands, a non-empty list of filters")
            }
            guard operands.count <= maximumOperands else {
                throw fail("or takes at most \(maximumOperands) operands, not \(operands.count)")
            }
            guard depth < maximumDepth else { throw fail("or filters nest at most \(maximumDepth - 1) deep") }
            var parsed: [KeenFilter] = []
            for (position, operand) in operands.enumerated() {
                parsed.append(try parse(operand, index: index, at: place + ".operands[\(position)]", depth: depth + 1))
            }
            return KeenFilter(or: parsed)
        }
        guard let path = item["property_name"]?.string, !path.isEmpty else {
            throw fail("needs property_name, a property path such as user.id")
        }
        guard let operand = item["property_value"] else { throw fail("needs property_value") }
        switch op {
        case .exists:
            guard case .bool = operand else { throw fail("exists takes true or false") }
        case .in:
            guard case .array = operand else { throw fail("in takes a list of values") }
        case .contains, .not_contains:
            guard case .string = operand else { throw fail("\(name) takes a string") }
        case .regex:
            guard let pattern = operand.string else { throw fail("regex takes a string") }
            do {
                _ = try LinearRegex(pattern)
            } catch {
                throw fail("regex '\(pattern.prefix(80))': \(error)")
            }
        case .within:
            guard let coordinates = operand["coordinates"]?.array, coordinates.count == 2,
                coordinates.allSatisfy({ $0.number != nil }), operand["max_distance_miles"]?.number != nil
            else {
                throw fail("within takes {\"coordinates\": [longitude, latitude], \"max_distance_miles\": n}")
            }
        case .lt, .lte, .gt, .gte:
            guard operand.number != nil || operand.string != nil else {
                throw fail("\(name) compares with a number or a string")
            }
        case .eq, .ne, .or: break
        }
        return KeenFilter(path: path, op: op, value: operand)
    }

    var json: JSONValue {
        if op == .or { return ["operator": "or", "operands": .array(operands.map(\.json))] }
        return ["property_name": .string(path), "operator": .string(op.rawValue), "property_value": value]
    }
}

/// One analysis of a multi-analysis (or the query's own).
public struct AnalysisSpec: Sendable, Hashable {
    public var type: AnalysisType
    public var target: String?
    public var percentile: Double?
}

/// A funnel step.
public struct FunnelStep: Sendable, Hashable {
    public var collection: String
    public var actor: String
    public var timeframe: Timeframe?
    public var timeframeJSON: JSONValue
    public var timezoneJSON: JSONValue
    public var filters: [KeenFilter]
    public var optional: Bool
    public var inverted: Bool
    public var withActors: Bool
}

/// A query, read from its parameters (a `POST` body or a `GET`'s query string, `null` meaning
/// absent and unknown keys ignored, as Keen's clients expect) and resolved at `now`.
public struct KeenQuery: Sendable {
    public var analysis: AnalysisSpec
    public var collection: String?
    public var filters: [KeenFilter]
    public var timeframe: Timeframe?
    public var timeframeJSON: JSONValue
    public var zone: QueryZone
    public var zoneJSON: JSONValue
    public var interval: QueryInterval?
    public var groupBy: [String]
    /// `order_by`: "result", a group_by property or (multi_analysis) a label, and the direction.
    public var orderBy: [(property: String, descending: Bool)]
    public var limit: Int?
    public var latest: Int?
    public var propertyNames: [String]?
    public var analyses: [(label: String, spec: AnalysisSpec)]
    public var steps: [FunnelStep]
    /// `max_age`: seconds a cached result may be old and still answer.
    public var maxAge: Int?
    /// An extraction's `email`: Keen mails the events as a CSV file; with no mail server here, the
    /// file is written on the server and the answer says where.
    public var email: String?

    /// Query-string parameters as Keen's clients send them (`filters`, `steps`, `analyses`,
    /// `order_by`, `property_names` JSON-encoded; `timeframe` and `group_by` JSON when they are
    /// objects or lists; numbers as text) into the parameters a body would hold.
    public static func parameters(fromQuery items: [(name: String, value: String)]) throws(KeenError) -> JSONObject {
        let json: Set<String> = ["filters", "steps", "analyses", "order_by", "property_names"]
        let maybeJSON: Set<String> = ["timeframe", "group_by"]
        let numeric: Set<String> = ["timezone", "percentile", "limit", "latest", "max_age"]
        var object = JSONObject()
        for (name, value) in items where name != "api_key" {
            if json.contains(name) || (maybeJSON.contains(name) && (value.hasPrefix("{") || value.hasPrefix("["))) {
                do {
                    object[name] = try JSONValue.parse(value)
                } catch {
                    throw .badParameter(name, "is not valid JSON (\(error))")
                }
            } else if numeric.contains(name), let number = Double(value) {
                object[name] = .number(number)
            } else if value == "null" {
                object[name] = .null
            } else {
                object[name] = .string(value)
            }
        }
        return object
    }

    public static func parse(
        _ type: String, parameters: JSONObject, now: Int64, keyFilters: [KeenFilter] = []
    ) throws(KeenError) -> KeenQuery {
        guard let analysis = AnalysisType(rawValue: type) else { throw .unknownAnalysis(type) }
        func value(_ key: String) -> JSONValue? {
            guard let value = parameters[key], value != .null else { return nil }
            return value
        }
        func string(_ key: String) throws(KeenError) -> String? {
            guard let found = value(key) else { return nil }
            guard let text = found.string, !text.isEmpty else {
                throw .badParameter(key, "must be a non-empty string, not \(found.typeName)")
            }
            return text
        }
        let zoneJSON = value("timezone") ?? .null
        let zone = try QueryZone.parse(zoneJSON)
        let timeframeJSON = value("timeframe") ?? .null
        let timeframe = try zone.resolve(timeframeJSON, now: now)
        let interval = try QueryInterval.parse(value("interval"))
        if interval != nil && timeframe == nil {
            throw .interval("an interval needs a timeframe to divide")
        }
        var groupBy: [String] = []
        switch value("group_by") {
        case nil: break
        case .string(let name)?: groupBy = [name]
        case .array(let names)?:
            for name in names {
                guard let text = name.string, !text.isEmpty else {
                    throw .badParameter("group_by", "must be a property name or a list of them")
                }
                groupBy.append(text)
            }
        case let other?:
            throw .badParameter("group_by", "must be a property name or a list of them, not \(other.typeName)")
        }
        var orderBy: [(String, Bool)] = []
        if let order = value("order_by") {
            let items: [JSONValue] = order.array ?? [order]
            for item in items {
                if let name = item.string {
                    orderBy.append((name, false))
                    continue
                }
                guard let name = item["property_name"]?.string else {
                    throw .badParameter(
                        "order_by", "each entry needs property_name (\"result\" or a group_by property)")
                }
                let direction = item["direction"]?.string?.uppercased() ?? "ASC"
                guard direction == "ASC" || direction == "DESC" else {
                    throw .badParameter("order_by", "direction is ASC or DESC, not \(direction)")
                }
                guard name == "result" || groupBy.contains(name) || analysis == .multi_analysis else {
                    throw .badParameter("order_by", "'\(name)' is neither result nor a group_by property")
                }
                orderBy.append((name, direction == "DESC"))
            }
            guard !groupBy.isEmpty else { throw .badParameter("order_by", "needs group_by") }
        }
        var limit: Int?
        if let found = value("limit") {
            limit = try whole(found, "limit", 1...QueryEngine.maximumGroups)
            guard !orderBy.isEmpty else { throw .badParameter("limit", "needs order_by") }
        }
        var spec = AnalysisSpec(type: analysis, target: try string("target_property"), percentile: nil)
        if analysis.needsTarget && spec.target == nil {
            throw .missingParameter("target_property", "for \(analysis.rawValue)")
        }
        if analysis == .percentile {
            guard let percentile = value("percentile")?.number, (0...100).contains(percentile) else {
                throw .missingParameter("percentile", "for percentile, a number from 0 to 100")
            }
            spec.percentile = percentile
        }
        let collection = try string("event_collection")
        if analysis != .funnel && collection == nil {
            throw .missingParameter("event_collection", "for \(analysis.rawValue)")
        }
        var latest: Int?
        if let found = value("latest") {
            if let number = found.number, number > Double(QueryEngine.maximumExtraction), number.isFinite,
                number == number.rounded()
            {
                throw .tooMany(
                    "latest: an extraction answers at most \(QueryEngine.maximumExtraction) events, not \(found.jsonText)"
                )
            }
            latest = try whole(found, "latest", 1...QueryEngine.maximumExtraction)
        }
        var maxAge: Int?
        if let found = value("max_age") {
            // A cached result no older than this many seconds may answer (the server keeps them).
            maxAge = try whole(found, "max_age", 0...31_536_000)
        }
        var propertyNames: [String]?
        if let found = value("property_names") {
            guard let names = found.array?.compactMap(\.string), names.count == found.array?.count else {
                throw .badParameter("property_names", "must be a list of property names")
            }
            propertyNames = names
        }
        var analyses: [(String, AnalysisSpec)] = []
        if analysis == .multi_analysis {
            guard let object = value("analyses")?.object, !object.isEmpty else {
                throw .missingParameter("analyses", "for multi_analysis: {\"label\": {\"analysis_type\": ...}}")
            }
            for (label, item) in object.members {
                guard let name = item["analysis_type"]?.string, let type = AnalysisType(rawValue: name),
                    ![.extraction, .funnel, .multi_analysis].contains(type)
                else {
                    throw .badParameter(
                        "analyses.\(label)", "needs an analysis_type other than extraction, funnel and multi_analysis")
                }
                var inner = AnalysisSpec(type: type, target: item["target_property"]?.string, percentile: nil)
                if type.needsTarget && inner.target == nil {
                    throw .missingParameter("analyses.\(label).target_property", "for \(name)")
                }
                if type == .percentile {
                    guard let percentile = item["percentile"]?.number, (0...100).contains(percentile) else {
                        throw .missingParameter("analyses.\(label).percentile", "a number from 0 to 100")
                    }
                    inner.percentile = percentile
                }
                analyses.append((label, inner))
            }
        }
        var steps: [FunnelStep] = []
        if analysis == .funnel {
            guard let items = value("steps")?.array, !items.isEmpty else {
                throw .missingParameter("steps", "for funnel: a list of steps")
            }
            for (index, item) in items.enumerated() {
                guard let collection = item["event_collection"]?.string, !collection.isEmpty else {
                    throw .missingParameter("steps[\(index)].event_collection", "")
                }
                guard let actor = item["actor_property"]?.string, !actor.isEmpty else {
                    throw .missingParameter("steps[\(index)].actor_property", "")
                }
                let stepZoneJSON = item["timezone"].flatMap { $0 == .null ? nil : $0 } ?? zoneJSON
                let stepZone = try QueryZone.parse(stepZoneJSON)
                let stepTimeframeJSON = item["timeframe"].flatMap { $0 == .null ? nil : $0 } ?? timeframeJSON
                let stepTimeframe = try stepZone.resolve(stepTimeframeJSON, now: now)
                let optional = item["optional"] == .bool(true)
                let inverted = item["inverted"] == .bool(true)
                if index == 0 && (optional || inverted) {
                    throw .badParameter("steps[0]", "the first step can be neither optional nor inverted")
                }
                steps.append(
                    FunnelStep(
                        collection: collection, actor: actor, timeframe: stepTimeframe,
                        timeframeJSON: stepTimeframeJSON,
                        timezoneJSON: stepZoneJSON, filters: try KeenFilter.parseList(item["filters"]) + keyFilters,
                        optional: optional, inverted: inverted, withActors: item["with_actors"] == .bool(true)))
            }
        }
        var email: String?
        if let found = value("email") {
            guard analysis == .extraction else {
                throw .badParameter("email", "is for an extraction only (the events sent as a file)")
            }
            guard let text = found.string, Self.isAddress(text) else {
                throw .badParameter("email", "must be an email address (name@host), not \(found.jsonText.prefix(80))")
            }
            guard latest == nil else {
                throw .badParameter(
                    "email", "and latest together are not supported here: give a timeframe for the events to send")
            }
            email = text
        }
        return KeenQuery(
            analysis: spec, collection: collection, filters: try KeenFilter.parseList(value("filters")) + keyFilters,
            timeframe: timeframe, timeframeJSON: timeframeJSON, zone: zone, zoneJSON: zoneJSON, interval: interval,
            groupBy: groupBy, orderBy: orderBy, limit: limit, latest: latest, propertyNames: propertyNames,
            analyses: analyses, steps: steps, maxAge: maxAge, email: email)
    }

    /// An address as a mail server would take it: one `@` with a name before it and a host with a
    /// dot after it, no spaces or control characters, at most 254 bytes.
    static func isAddress(_ text: String) -> Bool {
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        return text.utf8.count <= 254 && parts.count == 2 && !parts[0].isEmpty && parts[1].contains(".")
            && !parts[1].hasPrefix(".") && !parts[1].hasSuffix(".")
            && text.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value != 0x7F }
    }
}

extension KeenQuery {
    /// A whole-number parameter within `range`: anything else (a fraction, a huge number, text,
    /// infinity) is Keen's 400 naming the parameter and the range, never a trap on conversion.
    public static func whole(_ value: JSONValue, _ name: String, _ range: ClosedRange<Int>) throws(KeenError) -> Int {
        guard let number = value.number, number.isFinite, number == number.rounded(),
            number >= Double(range.lowerBound), number <= Double(range.upperBound)
        else {
            throw .badParameter(
                name,
                "must be a whole number from \(range.lowerBound) to \(range.upperBound), not \(value.jsonText.prefix(40))"
            )
        }
        return Int(number)
    }
}
