/// A regular expression matched in time linear in the text (Thompson's construction, run as a
/// set of states over the text), for Keen's `regex` filter: a backtracking engine takes
/// exponential time on `^(a+)+$` against "aaaa…b", and one such filter held a query's thread for
/// minutes. What needs backtracking is refused when the filter is read: backreferences,
/// lookaround, possessive quantifiers and atomic groups.
///
/// The syntax is the common one (ICU's, PCRE's): literals and escapes (`\.`, `\n`, `\t`, `\xHH`,
/// `\uHHHH`), `.` (any character but a line break), classes `[a-z]`, `[^…]`, `\d \w \s \D \W \S`
/// and POSIX `[:alpha:]`-style names inside brackets, anchors `^ $ \A \z \Z \b \B`, groups `( )`,
/// `(?: )`, `(?<name> )`, alternation `|`, quantifiers `* + ? {n} {n,} {n,m}` (lazy forms match
/// the same texts), and a leading `(?i)` for case-insensitive matching. A filter matches when the
/// pattern matches anywhere in the text, as `firstMatch` does.
public struct LinearRegex: Sendable {
    /// Instructions a compiled pattern may have (a counted repetition is written out).
    public static let maximumProgram = 10_000
    public static let maximumPatternLength = 1_000
    /// Character sets given ASCII bits at most (see `init`).
    static let maximumASCIISets = 64

    enum Instruction: Sendable {
        case character(CharacterSet)
        case split(Int, Int)
        case jump(Int)
        case assertion(Assertion)
        case match
    }

    /// An instruction as the matcher runs it: `character` names its set in `sets`.
    enum Code: Sendable {
        case character(Int)
        case split(Int, Int)
        case jump(Int)
        case assertion(Assertion)
        case match
    }

    /// The ASCII scalars a set holds, one bit each.
    struct ASCIIBits: Sendable {
        var low: UInt64 = 0
        var high: UInt64 = 0

        mutating func insert(_ value: UInt32) {
            if value < 64 { low |= 1 << UInt64(value) } else { high |= 1 << UInt64(value - 64) }
        }

        func contains(_ value: UInt32) -> Bool {
            value < 64 ? low & (1 << UInt64(value)) != 0 : high & (1 << UInt64(value - 64)) != 0
        }
    }

    enum Assertion: Sendable {
        case textStart, textEnd, textEndOrFinalNewline, wordBoundary, notWordBoundary
    }

    /// A set of Unicode scalars: ranges (sorted), classes, negation.
    struct CharacterSet: Sendable {
        var ranges: [ClosedRange<UInt32>] = []
        var classes: [ScalarClass] = []
        var negated = false

        func contains(_ scalar: Unicode.Scalar, caseInsensitive: Bool) -> Bool {
            var found = containsExactly(scalar)
            if !found && caseInsensitive {
                for other in LinearRegex.caseVariants(scalar) where containsExactly(other) {
                    found = true
                    break
                }
            }
            return found != negated
        }

        private func containsExactly(_ scalar: Unicode.Scalar) -> Bool {
            let value = scalar.value
            for range in ranges where range.contains(value) { return true }
            for scalarClass in classes where scalarClass.contains(scalar) { return true }
            return false
        }
    }

    enum ScalarClass: Sendable {
        case digit, word, space, any, alpha, alnum, upper, lower, punct, xdigit, cntrl, print, graph, blank
        case not(Box)

        final class Box: Sendable {
            let inner: ScalarClass
            init(_ inner: ScalarClass) { self.inner = inner }
        }

        func contains(_ scalar: Unicode.Scalar) -> Bool {
            let properties = scalar.properties
            switch self {
            case .digit: return properties.numericType == .decimal
            case .word:
                return properties.isAlphabetic || properties.numericType == .decimal || scalar == "_"
                    || properties.generalCategory == .nonspacingMark
                    || properties.generalCategory == .connectorPunctuation
            case .space: return properties.isWhitespace
            case .any:
                return scalar != "\n" && scalar != "\r" && scalar != "\u{85}" && scalar != "\u{2028}"
                    && scalar != "\u{2029}"
            case .alpha: return properties.isAlphabetic
            case .alnum: return properties.isAlphabetic || properties.numericType == .decimal
            case .upper: return properties.isUppercase
            case .lower: return properties.isLowercase
            case .punct:
                switch properties.generalCategory {
                case .connectorPunctuation, .dashPunctuation, .openPunctuation, .closePunctuation,
                    .initialPunctuation, .finalPunctuation, .otherPunctuation:
                    return true
                default: return false
                }
            case .xdigit: return scalar.isASCII && scalar.properties.isASCIIHexDigit
            case .cntrl: return properties.generalCategory == .control
            case .print: return properties.generalCategory != .control && properties.generalCategory != .unassigned
            case .graph:
                return properties.generalCategory != .control && !properties.isWhitespace
                    && properties.generalCategory != .unassigned
            case .blank: return scalar == " " || scalar == "\t"
            case .not(let box): return !box.inner.contains(scalar)
            }
        }
    }

    /// The program as the matcher runs it: instructions without payloads to copy (a character
    /// set's arrays were retained and released at every state of every character), each
    /// character instruction naming its set, and each set as bits for ASCII scalars.
    let program: [Code]
    let sets: [CharacterSet]
    let asciiSets: [ASCIIBits]
    let caseInsensitive: Bool
    public let pattern: String

    /// Reads and compiles `pattern`; the error says what is not supported, or where the syntax is wrong.
    public init(_ pattern: String) throws(RegexError) {
        guard pattern.unicodeScalars.count <= Self.maximumPatternLength else {
            throw RegexError("longer than \(Self.maximumPatternLength) characters")
        }
        var parser = Parser(Array(pattern.unicodeScalars))
        let flags = parser.leadingFlags()
        let tree = try parser.parseAll()
        var compiler = Compiler()
        try compiler.emit(tree)
        compiler.program.append(.match)
        var sets: [CharacterSet] = []
        program = compiler.program.map { instruction in
            switch instruction {
            case .character(let set):
                sets.append(set)
                return .character(sets.count - 1)
            case .split(let first, let second): return .split(first, second)
            case .jump(let target): return .jump(target)
            case .assertion(let assertion): return .assertion(assertion)
            case .match: return .match
            }
        }
        // The first sets only: a counted repetition writes a set out once per repetition (up to
        // the program's limit), and filling 128 bits for each was most of a long pattern's
        // compilation. The others are asked scalar by scalar.
        asciiSets = sets.prefix(Self.maximumASCIISets).map { set in
            var bits = ASCIIBits()
            for value in UInt32(0)..<128 where set.contains(Unicode.Scalar(value)!, caseInsensitive: flags) {
                bits.insert(value)
            }
            return bits
        }
        self.sets = sets
        caseInsensitive = flags
        self.pattern = pattern
    }

    /// A matcher of this pattern, with the state it reuses from one text to the next (one per
    /// query: it is not shared between threads).
    public func matcher() -> Matcher { Matcher(self) }

    /// Matches one pattern against many texts, reusing its state sets.
    public final class Matcher {
        let regex: LinearRegex
        var current: StateSet
        var next: StateSet
        var stack: [Int] = []
        var scalars: [Unicode.Scalar] = []

        init(_ regex: LinearRegex) {
            self.regex = regex
            current = StateSet(capacity: regex.program.count)
            next = StateSet(capacity: regex.program.count)
        }

        /// Whether the pattern matches anywhere in `text`; `steps` is told the work done (one per
        /// live state per character), for the caller's budget.
        public func matches(_ text: String, steps: inout Int) -> Bool {
            // The state is worked on in locals (moved out of the matcher and back, no copies): a
            // class's stored properties passed inout are checked for exclusive access at run time,
            // at every state of every character.
            var run = Run(scalars: [], current: StateSet(capacity: 0), next: StateSet(capacity: 0), stack: [])
            swap(&run.scalars, &scalars)
            swap(&run.current, &current)
            swap(&run.next, &next)
            swap(&run.stack, &stack)
            defer {
                swap(&run.scalars, &scalars)
                swap(&run.current, &current)
                swap(&run.next, &next)
                swap(&run.stack, &stack)
            }
            run.scalars.removeAll(keepingCapacity: true)
            run.scalars.append(contentsOf: text.unicodeScalars)
            var work = 0
            defer { steps &+= work }
            return regex.program.withUnsafeBufferPointer { program in
                regex.sets.withUnsafeBufferPointer { sets in
                    regex.asciiSets.withUnsafeBufferPointer { asciiSets in
                        run.matches(
                            Program(codes: program, sets: sets, asciiSets: asciiSets),
                            caseInsensitive: regex.caseInsensitive, work: &work)
                    }
                }
            }
        }

        /// The compiled pattern, borrowed for one text's search.
        struct Program {
            let codes: UnsafeBufferPointer<Code>
            let sets: UnsafeBufferPointer<CharacterSet>
            let asciiSets: UnsafeBufferPointer<ASCIIBits>

            func accepts(_ set: Int, _ scalar: Unicode.Scalar, caseInsensitive: Bool) -> Bool {
                scalar.value < 128 && set < asciiSets.count
                    ? asciiSets[set].contains(scalar.value)
                    : sets[set].contains(scalar, caseInsensitive: caseInsensitive)
            }
        }

        /// One text's search: the text's scalars, the live states at this position and the next.
        struct Run {
            var scalars: [Unicode.Scalar]
            var current: StateSet
            var next: StateSet
            var stack: [Int]

            mutating func matches(_ program: Program, caseInsensitive: Bool, work: inout Int) -> Bool {
                current.clear()
                let count = scalars.count
                for position in 0...count {
                    // The search may start at any position.
                    if addClosure(0, at: position, toNext: false, program, work: &work) { return true }
                    if position == count { break }
                    let scalar = scalars[position]
                    next.clear()
                    for slot in 0..<current.count {
                        let index = current.dense[slot]
                        work &+= 1
                        guard case .character(let set) = program.codes[index],
                            program.accepts(set, scalar, caseInsensitive: caseInsensitive)
                        else { continue }
                        if addClosure(index + 1, at: position + 1, toNext: true, program, work: &work) { return true }
                    }
                    swap(&current, &next)
                }
                return false
            }

            /// Adds `start` and every state reached from it without reading a character to the
            /// current or the next set; true when one of them is the match.
            private mutating func addClosure(
                _ start: Int, at position: Int, toNext: Bool, _ program: Program, work: inout Int
            ) -> Bool {
                stack.append(start)
                while let index = stack.popLast() {
                    guard toNext ? next.insert(index) : current.insert(index) else { continue }
                    work &+= 1
                    switch program.codes[index] {
                    case .match:
                        stack.removeAll(keepingCapacity: true)
                        return true
                    case .jump(let target): stack.append(target)
                    case .split(let first, let second):
                        stack.append(second)
                        stack.append(first)
                    case .assertion(let assertion):
                        if LinearRegex.holds(assertion, at: position, in: scalars) { stack.append(index + 1) }
                    case .character: break
                    }
                }
                return false
            }
        }
    }

    /// Whether the pattern matches anywhere in `text` (a matcher of its own: for one-off checks).
    public func matches(_ text: String) -> Bool {
        var steps = 0
        return matcher().matches(text, steps: &steps)
    }

    static func holds(_ assertion: Assertion, at position: Int, in text: [Unicode.Scalar]) -> Bool {
        switch assertion {
        case .textStart: return position == 0
        case .textEnd: return position == text.count
        case .textEndOrFinalNewline:
            return position == text.count || (position == text.count - 1 && text[position] == "\n")
        case .wordBoundary, .notWordBoundary:
            let before = position > 0 && ScalarClass.word.contains(text[position - 1])
            let after = position < text.count && ScalarClass.word.contains(text[position])
            return (before != after) == (assertion == .wordBoundary)
        }
    }

    static func caseVariants(_ scalar: Unicode.Scalar) -> [Unicode.Scalar] {
        let properties = scalar.properties
        return [properties.lowercaseMapping, properties.uppercaseMapping, properties.titlecaseMapping].compactMap {
            let scalars = $0.unicodeScalars
            return scalars.count == 1 && scalars.first != scalar ? scalars.first : nil
        }
    }

    /// The states live at one position: a sparse set, cleared in constant time.
    struct StateSet {
        var dense: [Int]
        var sparse: [Int]
        var count = 0

        init(capacity: Int) {
            dense = Array(repeating: 0, count: capacity)
            sparse = Array(repeating: 0, count: capacity)
        }

        mutating func clear() { count = 0 }

        mutating func insert(_ value: Int) -> Bool {
            let slot = sparse[value]
            if slot < count && dense[slot] == value { return false }
            sparse[value] = count
            dense[count] = value
            count += 1
            return true
        }
    }
}

/// Why a pattern was refused, with the position where it went wrong when there is one.
public struct RegexError: Error, Sendable, CustomStringConvertible {
    public var reason: String
    public init(_ reason: String) { self.reason = reason }
    public var description: String { reason }
}
