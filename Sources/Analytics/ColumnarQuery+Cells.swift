import Foundation

extension ColumnarQuery {
    /// A column's values as small numbers: a string its dictionary number, then the other kinds,
    /// then each distinct number; and back.
    struct Keys {
        let column: Column
        let strings: Int
        var numberIDs: [Double: Int32] = [:]
        var numbers: [Double] = []

        init(_ column: Column) {
            self.column = column
            strings = column.dictionary.count
        }

        /// null, false, true, empty object, missing.
        var special: Int { strings }
        static let specials = 5

        mutating func key(_ row: Int) -> Int32 {
            switch Column.Kind(rawValue: column.kinds[row]) ?? .missing {
            case .string: return column.codes[row]
            case .null: return Int32(special)
            case .falseValue: return Int32(special + 1)
            case .trueValue: return Int32(special + 2)
            case .emptyObject: return Int32(special + 3)
            case .missing, .list: return Int32(special + 4)
            case .number:
                let value = column.numbers[row]
                if let id = numberIDs[value] { return id }
                let id = Int32(special + Self.specials + numbers.count)
                numberIDs[value] = id
                numbers.append(value)
                return id
            }
        }

        func isMissing(_ key: Int32) -> Bool { key == Int32(special + 4) }

        func value(_ key: Int32) -> FieldValue? {
            let key = Int(key)
            if key < strings { return .string(column.dictionary[key]) }
            switch key - strings {
            case 0: return .null
            case 1: return .bool(false)
            case 2: return .bool(true)
            case 3: return .emptyObject
            case 4: return nil
            default: return .number(numbers[key - strings - Self.specials])
            }
        }
    }

    /// A filter decided per row from its column: strings and the other kinds by table, numbers
    /// by comparison (as the row engine's test decides them).
    struct Test {
        var column: Column?
        var byCode: [Bool] = []
        /// By kind: missing, null, false, true, (number: `number`), (string: `byCode`), list, empty.
        var byKind: [Bool] = Array(repeating: false, count: 8)
        var number: (Double) -> Bool = { _ in false }
        var operands: [Test] = []
        var isOr = false

        init(_ filter: KeenFilter, columns: [String: Column]) {
            if filter.op == .or {
                isOr = true
                operands = filter.operands.map { Test($0, columns: columns) }
                return
            }
            var reader = QueryEngine.Reader(pathCount: 1)
            let compiled = QueryEngine.compile([filter], reader: &reader, paths: [filter.path])[0]
            func decide(_ value: FieldValue?) -> Bool { compiled.matches([value]) }
            let column = columns[filter.path]
            self.column = column
            byKind[Int(Column.Kind.missing.rawValue)] = decide(nil)
            byKind[Int(Column.Kind.null.rawValue)] = decide(.null)
            byKind[Int(Column.Kind.falseValue.rawValue)] = decide(.bool(false))
            byKind[Int(Column.Kind.trueValue.rawValue)] = decide(.bool(true))
            byKind[Int(Column.Kind.emptyObject.rawValue)] = decide(.emptyObject)
            byCode = (column?.dictionary ?? []).map { decide(.string($0)) }
            let operand = filter.value
            switch filter.op {
            case .exists: number = { _ in operand == .bool(true) }
            case .eq:
                if let wanted = operand.number { number = { $0 == wanted } }
            case .ne:
                if let wanted = operand.number { number = { $0 != wanted } } else { number = { _ in true } }
            case .lt, .lte, .gt, .gte:
                if let wanted = operand.number {
                    switch filter.op {
                    case .lt: number = { $0 < wanted }
                    case .lte: number = { $0 <= wanted }
                    case .gt: number = { $0 > wanted }
                    default: number = { $0 >= wanted }
                    }
                }
            case .in:
                let wanted = Set((operand.array ?? []).compactMap(\.number))
                number = { wanted.contains($0) }
            default: break
            }
        }

        /// Keeps the rows of `selected` that pass, in order.
        func narrow(_ selected: inout [Int32]) throws {
            var kept = 0
            if isOr || column == nil {
                for row in selected where passes(Int(row)) {
                    selected[kept] = row
                    kept += 1
                }
            } else {
                let column = column!
                let string = Column.Kind.string.rawValue
                let numeric = Column.Kind.number.rawValue
                column.kinds.withUnsafeBufferPointer { kinds in
                    column.codes.withUnsafeBufferPointer { codes in
                        byCode.withUnsafeBufferPointer { byCode in
                            byKind.withUnsafeBufferPointer { byKind in
                                for row in selected {
                                    let index = Int(row)
                                    let kind = kinds[index]
                                    let pass =
                                        kind == string
                                        ? byCode[Int(codes[index])]
                                        : kind == numeric ? number(column.numbers[index]) : byKind[Int(kind)]
                                    if pass {
                                        selected[kept] = row
                                        kept += 1
                                    }
                                }
                            }
                        }
                    }
                }
            }
            selected.removeLast(selected.count - kept)
        }

        func passes(_ row: Int) -> Bool {
            if isOr { return operands.contains { $0.passes(row) } }
            guard let column else { return byKind[0] }
            let kind = column.kinds[row]
            switch kind {
            case Column.Kind.string.rawValue: return byCode[Int(column.codes[row])]
            case Column.Kind.number.rawValue: return number(column.numbers[row])
            default: return byKind[Int(kind)]
            }
        }
    }

    /// One analysis of one cell.
    struct Cell {
        var count = 0
        var accumulator: QueryEngine.Accumulator
        var distinct: [UInt64] = []
        var distinctSet: Set<Int32> = []
        var samples: [Double] = []
    }
}
