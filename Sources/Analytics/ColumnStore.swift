import Foundation
import Synchronization

/// One property of a collection's events as a column: per event its kind, and for a string its
/// number in the column's dictionary, for a number its value. Built from the stored events and
/// kept up to date by the store as it writes (``ColumnStore``).
public struct Column: Sendable {
    /// What an event holds at this path.
    public enum Kind: UInt8, Sendable {
        case missing, null, falseValue, trueValue, number, string, list, emptyObject
    }

    public internal(set) var kinds: [UInt8] = []
    /// For a string, its number in `dictionary` (0 otherwise).
    public internal(set) var codes: [Int32] = []
    /// For a number, its value (0 otherwise).
    public internal(set) var numbers: [Double] = []
    public internal(set) var dictionary: [String] = []
    var index: [String: Int32] = [:]
    /// Whether any event holds a list here (queries over such a path run on the rows instead).
    public internal(set) var hasLists = false

    public init() {}

    public var count: Int { kinds.count }

    mutating func reserve(_ count: Int) {
        kinds.reserveCapacity(count)
        codes.reserveCapacity(count)
        numbers.reserveCapacity(count)
    }

    /// `other`'s rows after these, its strings numbered in this column's dictionary.
    mutating func append(contentsOf other: Column) {
        let codes = other.dictionary.map { text -> Int32 in
            if let known = index[text] { return known }
            let code = Int32(dictionary.count)
            dictionary.append(text)
            index[text] = code
            return code
        }
        kinds.append(contentsOf: other.kinds)
        numbers.append(contentsOf: other.numbers)
        for (kind, code) in zip(other.kinds, other.codes) {
            self.codes.append(kind == Kind.string.rawValue ? codes[Int(code)] : 0)
        }
        hasLists = hasLists || other.hasLists
    }

    /// `count` rows without a value.
    mutating func appendMissing(_ count: Int) {
        kinds.append(contentsOf: repeatElement(Kind.missing.rawValue, count: count))
        codes.append(contentsOf: repeatElement(0, count: count))
        numbers.append(contentsOf: repeatElement(0, count: count))
    }

    mutating func append(_ value: FieldValue?) {
        var kind = Kind.missing
        var code: Int32 = 0
        var number = 0.0
        switch value {
        case nil: kind = .missing
        case .null?: kind = .null
        case .bool(let flag)?: kind = flag ? .trueValue : .falseValue
        case .number(let value)?:
            kind = .number
            number = value
        case .string(let text)?:
            kind = .string
            if let known = index[text] {
                code = known
            } else {
                code = Int32(dictionary.count)
                dictionary.append(text)
                index[text] = code
            }
        case .list?:
            kind = .list
            hasLists = true
        case .emptyObject?: kind = .emptyObject
        }
        kinds.append(kind.rawValue)
        codes.append(code)
        numbers.append(number)
    }

    /// The value of row `row` as queries see it (lists are not kept: a path with lists is not
    /// queried from its column).
    public func value(_ row: Int) -> FieldValue? {
        switch Kind(rawValue: kinds[row]) ?? .missing {
        case .missing, .list: nil
        case .null: .null
        case .falseValue: .bool(false)
        case .trueValue: .bool(true)
        case .number: .number(numbers[row])
        case .string: .string(dictionary[Int(codes[row])])
        case .emptyObject: .emptyObject
        }
    }

    /// Bytes the column holds, roughly.
    var bytes: Int {
        kinds.capacity + codes.capacity * 4 + numbers.capacity * 8
            + dictionary.reduce(0) { $0 + 2 * $1.utf8.count + 80 }
    }
}

/// A collection's events as columns: their timestamps and numbers, and a column per property
/// asked for so far. Rows `0..<sorted` are in the table's `(timestamp, id)` order (they were read
/// from it); rows appended since, as written, follow.
public struct CollectionColumns: Sendable {
    public internal(set) var timestamps: [Int64] = []
    public internal(set) var rowIDs: [Int64] = []
    public internal(set) var sorted = 0
    public internal(set) var columns: [String: Column] = [:]
    /// For a store whose table other processes write (PostgreSQL): the highest event id these
    /// columns hold every committed event up to, and the collection's deletions counter they were
    /// read at (``ColumnStore/follow(project:collection:rows:from:through:deletions:pathNames:)``).
    public var followed: Int64 = 0
    public var deletions: Int64 = 0
    /// There too: the project's path dictionary as last read after these rows (it names every path
    /// they hold; dictionaries only grow).
    public var pathNames: [String] = []

    public var count: Int { timestamps.count }
    /// Rows written since the columns were read from the table (not in timestamp order).
    public var unsorted: Int { count - sorted }

    /// Bytes the columns hold, roughly.
    public var bytes: Int {
        timestamps.capacity * 8 + rowIDs.capacity * 8 + columns.values.reduce(0) { $0 + $1.bytes }
    }

    /// Reads `paths` of `collection` from `source`, every event of it, in the table's order.
    public static func read(
        collection: String, paths wanted: Set<String>, from source: some EventSource, budget: QueryBudget = .unlimited
    ) throws -> CollectionColumns {
        let paths = try source.paths()
        var slots = [Int32](repeating: -1, count: paths.count)
        let names = wanted.sorted()
        for (id, path) in paths.enumerated() {
            if let slot = names.firstIndex(of: path) { slots[id] = Int32(slot) }
        }
        var result = CollectionColumns()
        var columns = names.map { _ in Column() }
        let expected = try source.count(ScanPlan(collection: collection, timeframe: .allTime))
        result.timestamps.reserveCapacity(expected)
        result.rowIDs.reserveCapacity(expected)
        for index in columns.indices { columns[index].reserve(expected) }
        var values = [FieldValue?](repeating: nil, count: names.count)
        try source.scan(ScanPlan(collection: collection, timeframe: .allTime)) { row in
            if result.timestamps.count & 4095 == 4095 { try budget.check() }
            result.timestamps.append(row.timestamp)
            result.rowIDs.append(row.rowID)
            EventCodec.read(row.data, slots: slots, into: &values)
            for index in columns.indices { columns[index].append(values[index]) }
            return true
        }
        result.sorted = result.timestamps.count
        for (name, column) in zip(names, columns) { result.columns[name] = column }
        return result
    }

    /// `paths` of `collection` beside `kept` columns: when they hold no late rows, only the paths
    /// they lack are read (the same rows, in the same order) and added; else every path of both is
    /// read again, in the table's order.
    public static func read(
        collection: String, paths: Set<String>, beside kept: CollectionColumns?, from source: some EventSource,
        budget: QueryBudget = .unlimited
    ) throws -> CollectionColumns {
        if let kept, kept.unsorted == 0,
            let added = try kept.adding(
                read(collection: collection, paths: paths.subtracting(kept.columns.keys), from: source, budget: budget))
        {
            return added
        }
        return try read(
            collection: collection, paths: paths.union(kept?.columns.keys ?? [:].keys), from: source, budget: budget)
    }

    /// These columns with `other`'s added, when both hold the same rows in the same order (read
    /// from the same table with nothing written between); nil otherwise.
    public func adding(_ other: CollectionColumns) -> CollectionColumns? {
        guard unsorted == 0, other.unsorted == 0, rowIDs == other.rowIDs else { return nil }
        var merged = self
        for (path, column) in other.columns { merged.columns[path] = column }
        return merged
    }

    /// Appends `other`'s rows after these (not in timestamp order: they are late rows).
    mutating func append(rows other: CollectionColumns) {
        timestamps.append(contentsOf: other.timestamps)
        rowIDs.append(contentsOf: other.rowIDs)
        for name in columns.keys {
            if let column = other.columns[name] {
                columns[name]!.append(contentsOf: column)
            } else {
                columns[name]!.appendMissing(other.count)
            }
        }
    }

    /// Appends events as they were written (their leaves; only the paths held are kept).
    mutating func append(timestamp: Int64, rowID: Int64, leaves: [EventLeaf]) {
        timestamps.append(timestamp)
        rowIDs.append(rowID)
        // A path an event holds twice (an add-on's output over a property) is its last, as stored.
        var values: [String: FieldValue] = [:]
        for leaf in leaves where columns[leaf.path] != nil { values[leaf.path] = leaf.value }
        for name in columns.keys { columns[name]!.append(values[name]) }
    }

    /// Bytes columns of `count` events and `paths` properties would take, roughly (to decide before
    /// reading them).
    public static func estimate(count: Int, paths: Int) -> Int { count * (16 + 16 * paths) }
}

/// The columns of the collections queried so far, per project, in memory beside the store's
/// tables (which stay the record): the store reads a collection's columns once (under its writer,
/// so no event written meanwhile is missed), appends each event it writes, and drops them when
/// events are deleted or a write fails. Bounded: past `maximumBytes` in all, columns are not kept
/// (queries read the rows instead); a collection with many events written since it was read is
/// read again, in order.
public final class ColumnStore: Sendable {
    struct Key: Hashable {
        var project: String
        var collection: String
    }

    public let maximumBytes: Int
    private let state = Mutex<[Key: CollectionColumns]>([:])

    public init(maximumBytes: Int = 1 << 30) {
        self.maximumBytes = maximumBytes
    }

    /// The columns of `collection` holding every path of `paths`, if kept, and few enough rows
    /// written since they were read.
    public func columns(project: String, collection: String, paths: Set<String>) -> CollectionColumns? {
        state.withLock { state in
            guard let columns = state[Key(project: project, collection: collection)],
                paths.isSubset(of: Set(columns.columns.keys)),
                columns.unsorted <= max(100_000, columns.count / 4)
            else { return nil }
            return columns
        }
    }

    /// What is kept for `collection`, whatever its paths and late rows.
    public func kept(project: String, collection: String) -> CollectionColumns? {
        state.withLock { $0[Key(project: project, collection: collection)] }
    }

    /// Keeps `columns` for `collection`, unless they would take the store past its bound.
    @discardableResult
    public func keep(_ columns: CollectionColumns, project: String, collection: String) -> Bool {
        state.withLock { state in
            let key = Key(project: project, collection: collection)
            let others = state.filter { $0.key != key }.values.reduce(0) { $0 + $1.bytes }
            // Refused: what was kept for it stays (it answers what it holds).
            guard others + columns.bytes <= maximumBytes else { return false }
            state[key] = columns
            return true
        }
    }

    /// Events just written to `collection` (in the writer, before it commits).
    public func append(
        project: String, collection: String, events: [(timestamp: Int64, rowID: Int64, leaves: [EventLeaf])]
    ) {
        state.withLock { state in
            let key = Key(project: project, collection: collection)
            guard state[key] != nil else { return }
            for event in events {
                state[key]!.append(timestamp: event.timestamp, rowID: event.rowID, leaves: event.leaves)
            }
            // Past what a query would use (too many late rows) or the bound: dropped, read again
            // in order when next asked for.
            let columns = state[key]!
            if columns.unsorted > max(100_000, columns.count / 4)
                || state.values.reduce(0, { $0 + $1.bytes }) > maximumBytes
            {
                state[key] = nil
            }
        }
    }

    /// Rows other writers committed after `followed` (`rows`, read with every path the kept columns
    /// hold, in id order), up to `through`: appended when the kept columns still end at `followed`
    /// and read at the same deletions counter as `rows`. The columns now: the kept ones with the rows
    /// added, or the kept ones as they are when another query has already followed them past
    /// `through`; nil when none are kept, they were read at another deletions counter, or they
    /// moved on by less (the caller reads again), or they are dropped for too many late rows or
    /// the bound.
    public func follow(
        project: String, collection: String, rows: CollectionColumns, from followed: Int64, through: Int64,
        deletions: Int64, pathNames: [String] = []
    ) -> CollectionColumns? {
        state.withLock { state in
            let key = Key(project: project, collection: collection)
            guard let kept = state[key], kept.deletions == deletions else { return nil }
            if kept.followed >= through { return kept }
            guard kept.followed == followed, Set(rows.columns.keys).isSuperset(of: kept.columns.keys) else {
                return nil
            }
            state[key]!.append(rows: rows)
            state[key]!.followed = through
            if pathNames.count > state[key]!.pathNames.count { state[key]!.pathNames = pathNames }
            let columns = state[key]!
            if columns.unsorted > max(100_000, columns.count / 4)
                || state.values.reduce(0, { $0 + $1.bytes }) > maximumBytes
            {
                state[key] = nil
                return nil
            }
            return columns
        }
    }

    /// Forgets a project's columns (a write failed) or one collection's (events were deleted).
    public func drop(project: String, collection: String? = nil) {
        state.withLock { state in
            state = state.filter { $0.key.project != project || (collection != nil && $0.key.collection != collection) }
        }
    }
}
