/// The pattern's syntax tree and its parser: what a pattern means, before it is compiled.
extension LinearRegex {
    indirect enum Node {
        case set(CharacterSet)
        case assertion(Assertion)
        case sequence([Node])
        case alternation([Node])
        case repetition(Node, min: Int, max: Int?)
    }

    struct Parser {
        let scalars: [Unicode.Scalar]
        var index = 0

        init(_ scalars: [Unicode.Scalar]) { self.scalars = scalars }

        var atEnd: Bool { index >= scalars.count }
        var peek: Unicode.Scalar? { atEnd ? nil : scalars[index] }

        func error(_ reason: String) -> RegexError { RegexError("\(reason) (at character \(index + 1))") }

        /// A leading `(?i)`: case-insensitive matching for the whole pattern.
        mutating func leadingFlags() -> Bool {
            let prefix: [Unicode.Scalar] = ["(", "?", "i", ")"]
            guard scalars.count >= 4, Array(scalars[0..<4]) == prefix else { return false }
            index = 4
            return true
        }

        mutating func parseAll() throws(RegexError) -> Node {
            let node = try alternation()
            if !atEnd { throw error("an unmatched ')'") }
            return node
        }

        mutating func alternation() throws(RegexError) -> Node {
            var branches = [try sequence()]
            while peek == "|" {
                index += 1
                branches.append(try sequence())
            }
            return branches.count == 1 ? branches[0] : .alternation(branches)
        }

        mutating func sequence() throws(RegexError) -> Node {
            var items: [Node] = []
            while let scalar = peek, scalar != "|", scalar != ")" {
                var atom = try self.atom()
                atom = try quantified(atom)
                items.append(atom)
            }
            return items.count == 1 ? items[0] : .sequence(items)
        }

        mutating func quantified(_ atom: Node) throws(RegexError) -> Node {
            var node = atom
            while let scalar = peek {
                let bounds: (Int, Int?)
                switch scalar {
                case "*": bounds = (0, nil); index += 1
                case "+": bounds = (1, nil); index += 1
                case "?": bounds = (0, 1); index += 1
                case "{":
                    guard let counted = try countedBounds() else { return node }
                    bounds = counted
                default: return node
                }
                if case .assertion = node { throw error("a quantifier after an anchor") }
                if peek == "?" {
                    index += 1  // lazy: the same texts match
                } else if peek == "+" {
                    throw error("possessive quantifiers need backtracking and are not supported")
                }
                node = .repetition(node, min: bounds.0, max: bounds.1)
            }
            return node
        }

        /// `{n}`, `{n,}`, `{n,m}`; nil (a literal `{`) when it is not one of them.
        mutating func countedBounds() throws(RegexError) -> (Int, Int?)? {
            let start = index
            index += 1
            func number() -> Int? {
                var value: Int?
                while let scalar = peek, let digit = Int(String(scalar)), scalar.isASCII {
                    value = (value ?? 0) * 10 + digit
                    if value! > 1000 { value = 1001 }
                    index += 1
                }
                return value
            }
            guard let low = number() else {
                index = start
                return nil
            }
            var high: Int? = low
            if peek == "," {
                index += 1
                high = number()
            }
            guard peek == "}" else {
                index = start
                return nil
            }
            index += 1
            guard low <= 1000, (high ?? 0) <= 1000 else { throw error("a repetition count over 1000") }
            if let high, high < low { throw error("{\(low),\(high)}: the maximum is below the minimum") }
            return (low, high)
        }

        mutating func atom() throws(RegexError) -> Node {
            let scalar = scalars[index]
            switch scalar {
            case "(":
                index += 1
                if peek == "?" {
                    index += 1
                    switch peek {
                    case ":": index += 1
                    case "<" where index + 1 < scalars.count && scalars[index + 1] != "=" && scalars[index + 1] != "!",
                        "P":
                        // A named group: (?<name>…) or (?P<name>…).
                        if peek == "P" { index += 1 }
                        while let next = peek, next != ">" { index += 1 }
                        guard peek == ">" else { throw error("an unfinished group name") }
                        index += 1
                    case "=", "!", "<":
                        throw error("lookaround needs backtracking and is not supported")
                    case ">": throw error("atomic groups are not supported")
                    default: throw error("an unsupported group (only (?:…) and named groups; (?i) only at the start)")
                    }
                }
                let inner = try alternation()
                guard peek == ")" else { throw error("a '(' without its ')'") }
                index += 1
                return inner
            case ")": throw error("an unmatched ')'")
            case "*", "+", "?": throw error("'\(scalar)' with nothing to repeat")
            case "^": index += 1; return .assertion(.textStart)
            case "$": index += 1; return .assertion(.textEndOrFinalNewline)
            case ".": index += 1; return .set(CharacterSet(classes: [.any]))
            case "[": return .set(try bracket())
            case "\\": return try escape()
            default:
                index += 1
                return .set(CharacterSet(ranges: [scalar.value...scalar.value]))
            }
        }

        mutating func escape() throws(RegexError) -> Node {
            index += 1
            guard let scalar = peek else { throw error("a pattern ending in '\\'") }
            switch scalar {
            case "A": index += 1; return .assertion(.textStart)
            case "z": index += 1; return .assertion(.textEnd)
            case "Z": index += 1; return .assertion(.textEndOrFinalNewline)
            case "b": index += 1; return .assertion(.wordBoundary)
            case "B": index += 1; return .assertion(.notWordBoundary)
            case "1"..."9": throw error("backreferences need backtracking and are not supported")
            default: return .set(try escapedSet())
            }
        }

        /// An escape that stands for characters (after the `\`).
        mutating func escapedSet() throws(RegexError) -> CharacterSet {
            let scalar = scalars[index]
            index += 1
            func single(_ value: UInt32) -> CharacterSet { CharacterSet(ranges: [value...value]) }
            switch scalar {
            case "d": return CharacterSet(classes: [.digit])
            case "D": return CharacterSet(classes: [.digit], negated: true)
            case "w": return CharacterSet(classes: [.word])
            case "W": return CharacterSet(classes: [.word], negated: true)
            case "s": return CharacterSet(classes: [.space])
            case "S": return CharacterSet(classes: [.space], negated: true)
            case "n": return single(0x0A)
            case "t": return single(0x09)
            case "r": return single(0x0D)
            case "f": return single(0x0C)
            case "v": return single(0x0B)
            case "e": return single(0x1B)
            case "a": return single(0x07)
            case "0": return single(0)
            case "x", "u":
                let width = scalar == "x" ? 2 : 4
                var value: UInt32 = 0
                if scalar == "x" && peek == "{" {
                    index += 1
                    var digits = 0
                    while let next = peek, next != "}" {
                        guard let digit = next.properties.isASCIIHexDigit ? UInt32(String(next), radix: 16) : nil,
                            digits < 8
                        else { throw error("\\x{…} needs hexadecimal digits") }
                        value = value * 16 + digit
                        digits += 1
                        index += 1
                    }
                    guard peek == "}", digits > 0 else { throw error("an unfinished \\x{…}") }
                    index += 1
                } else {
                    for _ in 0..<width {
                        guard let next = peek, next.properties.isASCIIHexDigit,
                            let digit = UInt32(String(next), radix: 16)
                        else { throw error("\\\(scalar) needs \(width) hexadecimal digits") }
                        value = value * 16 + digit
                        index += 1
                    }
                }
                guard Unicode.Scalar(value) != nil else { throw error("\\\(scalar): not a Unicode scalar") }
                return single(value)
            case "p", "P", "k", "g", "Q", "E", "G", "X", "R", "N", "c":
                throw error("\\\(scalar) is not supported")
            default:
                if scalar.properties.isAlphabetic || scalar.properties.numericType != nil {
                    throw error("\\\(scalar) is not an escape this matcher knows")
                }
                // An escaped symbol stands for itself.
                return single(scalar.value)
            }
        }

        mutating func bracket() throws(RegexError) -> CharacterSet {
            index += 1
            var set = CharacterSet()
            if peek == "^" {
                set.negated = true
                index += 1
            }
            var first = true
            while true {
                guard let scalar = peek else { throw error("a '[' without its ']'") }
                if scalar == "]" && !first {
                    index += 1
                    return set
                }
                first = false
                if scalar == "[" && index + 1 < scalars.count && scalars[index + 1] == ":" {
                    set.classes.append(try posixClass())
                    continue
                }
                if scalar == "[" { throw error("nested classes and class operations are not supported") }
                let low: UInt32
                if scalar == "\\" {
                    index += 1
                    guard !atEnd else { throw error("a pattern ending in '\\'") }
                    let escaped = try escapedSet()
                    if !escaped.classes.isEmpty {
                        set.classes += escaped.negated ? escaped.classes.map { .not(.init($0)) } : escaped.classes
                        continue
                    }
                    low = escaped.ranges[0].lowerBound
                } else {
                    low = scalar.value
                    index += 1
                }
                // A range a-z (a '-' before ']' is itself).
                if peek == "-", index + 1 < scalars.count, scalars[index + 1] != "]" {
                    index += 1
                    var high = scalars[index].value
                    if scalars[index] == "\\" {
                        index += 1
                        guard !atEnd else { throw error("a pattern ending in '\\'") }
                        let escaped = try escapedSet()
                        guard escaped.classes.isEmpty else { throw error("a range ending in a class") }
                        high = escaped.ranges[0].lowerBound
                    } else {
                        index += 1
                    }
                    guard low <= high else { throw error("a range out of order") }
                    set.ranges.append(low...high)
                } else {
                    set.ranges.append(low...low)
                }
            }
        }

        mutating func posixClass() throws(RegexError) -> ScalarClass {
            index += 2
            var name = ""
            while let scalar = peek, scalar != ":" {
                name.unicodeScalars.append(scalar)
                index += 1
            }
            guard index + 1 < scalars.count, scalars[index + 1] == "]" else { throw error("an unfinished [:class:]") }
            index += 2
            let classes: [String: ScalarClass] = [
                "alpha": .alpha, "digit": .digit, "alnum": .alnum, "upper": .upper, "lower": .lower, "space": .space,
                "punct": .punct, "xdigit": .xdigit, "cntrl": .cntrl, "print": .print, "graph": .graph,
                "blank": .blank, "word": .word,
            ]
            guard let found = classes[name] else { throw error("[:\(name):] is not a class") }
            return found
        }
    }

    struct Compiler {
        var program: [Instruction] = []

        mutating func append(_ instruction: Instruction) throws(RegexError) {
            guard program.count < LinearRegex.maximumProgram else {
                throw RegexError("the pattern is too large once its repetitions are written out")
            }
            program.append(instruction)
        }

        mutating func emit(_ node: Node) throws(RegexError) {
            switch node {
            case .set(let set): try append(.character(set))
            case .assertion(let assertion): try append(.assertion(assertion))
            case .sequence(let items): for item in items { try emit(item) }
            case .alternation(let branches):
                // split L1, next; L1: branch; jump end; next: split ...
                var jumps: [Int] = []
                for (offset, branch) in branches.enumerated() {
                    if offset < branches.count - 1 {
                        let split = program.count
                        try append(.split(split + 1, -1))
                        try emit(branch)
                        jumps.append(program.count)
                        try append(.jump(-1))
                        program[split] = .split(split + 1, program.count)
                    } else {
                        try emit(branch)
                    }
                }
                for jump in jumps { program[jump] = .jump(program.count) }
            case .repetition(let inner, let min, let max):
                for _ in 0..<min { try emit(inner) }
                if let max {
                    // Each optional copy: split into it or past all of them.
                    var splits: [Int] = []
                    for _ in min..<max {
                        splits.append(program.count)
                        try append(.split(program.count + 1, -1))
                        try emit(inner)
                    }
                    for split in splits { program[split] = .split(split + 1, program.count) }
                } else {
                    // L: split body, end; body; jump L.
                    // A body that reads nothing cannot loop: the closure adds a state once per
                    // position.
                    let split = program.count
                    try append(.split(split + 1, -1))
                    try emit(inner)
                    try append(.jump(split))
                    program[split] = .split(split + 1, program.count)
                }
            }
        }
    }
}
