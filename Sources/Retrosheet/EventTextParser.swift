import Baseball

/// Why an event text could not be read, and where.
package struct EventTextError: Error, Sendable, Hashable, CustomStringConvertible {
    /// 0-based offset in the event text where reading stopped.
    package var offset: Int
    package var reason: String

    package var description: String { "\(reason) (at character \(offset + 1))" }
}

/// Reads the event field of a `play` record — Retrosheet's scoring notation — into a `Play`.
///
/// The grammar is the one Retrosheet documents and Chadwick's `cwevent` implements: a basic play
/// (`S8`, `64(1)3`, `K+SB2`, `W+WP`, `E6`, `FC5`, `CS2(26)`, `POCS2(1361)`, `C/E2`, `DGR`, `BK`,
/// `DI`, `OA`, `PB`, `WP`, `FLE7`, ...), then modifiers after `/` (`/G`, `/SF`, `/DP`, `/TH`,
/// trajectories and locations), then runner advances after `.` separated by `;` (`1-3`, `B-1`,
/// `2XH(92)`, `3-H(E2)(UR)`, `(NR)`, `(RBI)`, `(TUR)`). Where `cwevent` has a convention the
/// notation leaves open (which fielding credits mean an out, when a run is batted in), this
/// follows it, so the two agree on every play of the reference seasons.
package enum EventTextParser {
    /// Parses `text` (the raw bytes of the event field).
    package static func parse(_ text: UnsafeBufferPointer<UInt8>) throws(EventTextError) -> Play {
        let count = text.count
        guard count > 0 else { throw EventTextError(offset: 0, reason: "empty event") }
        guard count <= 256 else { throw EventTextError(offset: 256, reason: "event longer than 256 characters") }
        let result = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: count) {
            buffer -> Result<Play, EventTextError> in
            // Upper-case the text and note, in the same pass, where `SBH`, `CSH`, `FCSH` and `/GDP`
            // occur: `SBH` and `CSH` are read as `SB4` and `CS4` (unless the text has a fielder's
            // choice at home, `FCSH`), and `/GDP` decides who is charged with runners.
            var stealHome = -1
            var caughtHome = -1
            var fieldersChoiceHome = false
            var hasGDP = false
            for index in 0..<count {
                var byte = text[index]
                if byte >= 0x61 && byte <= 0x7A { byte -= 0x20 }
                buffer[index] = byte
                guard byte == UInt8(ascii: "H") || byte == UInt8(ascii: "P"), index >= 2 else { continue }
                let previous = buffer[index - 1]
                let beforeThat = buffer[index - 2]
                if byte == UInt8(ascii: "H") && previous == UInt8(ascii: "B") && beforeThat == UInt8(ascii: "S") {
                    if stealHome < 0 { stealHome = index }
                } else if byte == UInt8(ascii: "H") && previous == UInt8(ascii: "S") && beforeThat == UInt8(ascii: "C")
                {
                    if caughtHome < 0 { caughtHome = index }
                    if index >= 3 && buffer[index - 3] == UInt8(ascii: "F") { fieldersChoiceHome = true }
                } else if byte == UInt8(ascii: "P") && previous == UInt8(ascii: "D") && beforeThat == UInt8(ascii: "G")
                    && index >= 3 && buffer[index - 3] == UInt8(ascii: "/")
                {
                    hasGDP = true
                }
            }
            if stealHome >= 0 { buffer[stealHome] = UInt8(ascii: "4") }
            if caughtHome >= 0 && !fieldersChoiceHome { buffer[caughtHome] = UInt8(ascii: "4") }
            var scanner = EventTextScanner(UnsafeBufferPointer(buffer), count: count, hasGDP: hasGDP)
            do throws(EventTextError) {
                return .success(try scanner.parseEvent())
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// The modifiers a fielding credit on a runner advance takes (`2XH(92/TH)`), as cwevent's.
    static let creditFlags: [[UInt8]] = [
        "TH", "TH1", "TH2", "TH3", "THH", "INT", "BINT", "OBS", "G", "U", "AP", "BR", "FO",
    ].map { Array($0.utf8) }

    /// Whether `text[start..<end]`, upper-cased, is one of `words`: compared in place, since every
    /// play is checked and almost all are known (a String is made only for one that is not).
    @inline(__always)
    static func isOne(of words: [[UInt8]], _ text: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> Bool {
        let length = end - start
        return words.contains { word in
            guard word.count == length else { return false }
            for offset in 0..<length {
                let byte = text[start + offset]
                if (byte >= 0x61 && byte <= 0x7A ? byte - 0x20 : byte) != word[offset] { return false }
            }
            return true
        }
    }

    /// `text[start..<end]` upper-cased, as a String (for a warning).
    static func upperCased(_ text: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> String {
        String(
            decoding: (start..<end).map { text[$0] >= 0x61 && text[$0] <= 0x7A ? text[$0] - 0x20 : text[$0] },
            as: UTF8.self)
    }

    /// Whether a parenthesis follows the first dot (where the runner advances begin): the only
    /// place `unknownAdvanceNote` and `unknownCreditFlag` look, so that most plays are passed
    /// over with one short scan.
    package static func hasParenthesisAfterAdvances(_ text: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let dot = text.firstIndex(of: UInt8(ascii: ".")) else { return false }
        return text[(dot + 1)...].contains(UInt8(ascii: "("))
    }

    /// The first modifier of a fielding credit on a runner advance that is not one of
    /// `creditFlags` (`63/RINT` in `.BX1(63/RINT)`), or nil: what the reader warns of.
    package static func unknownCreditFlag(_ text: UnsafeBufferPointer<UInt8>) -> String? {
        guard let dot = text.firstIndex(of: UInt8(ascii: ".")) else { return nil }
        var index = dot + 1
        while index < text.count {
            defer { index += 1 }
            guard text[index] == UInt8(ascii: "("), index + 1 < text.count else { continue }
            let first = text[index + 1] & 0xDF  // upper case for letters
            guard (0x31...0x39).contains(text[index + 1]) || first == UInt8(ascii: "E") else { continue }
            var cursor = index + 1
            while cursor < text.count, text[cursor] != UInt8(ascii: "/"), text[cursor] != UInt8(ascii: ")") {
                cursor += 1
            }
            guard cursor < text.count, text[cursor] == UInt8(ascii: "/") else { continue }
            cursor += 1
            let start = cursor
            while cursor < text.count, !"/.()#!+-".utf8.contains(text[cursor]) { cursor += 1 }
            if !isOne(of: creditFlags, text, start, cursor) { return upperCased(text, start, cursor) }
        }
        return nil
    }

    /// The notes a runner advance takes in words (`1-2(NR)`), as cwevent reads them.
    static let advanceNotes: [[UInt8]] = [
        "NR", "NORBI", "RBI", "UR", "TUR", "WP", "PB", "TH", "TH1", "TH2", "TH3", "THH", "INT", "SB", "SB2", "SB3",
        "SB4", "SBH",
    ].map { Array($0.utf8) }

    /// The first note in words on a runner advance that is not one of `advanceNotes`
    /// (`OBS` in `.1-2(OBS)`), or nil: what the reader warns of.
    package static func unknownAdvanceNote(_ text: UnsafeBufferPointer<UInt8>) -> String? {
        guard let dot = text.firstIndex(of: UInt8(ascii: ".")) else { return nil }
        var index = dot + 1
        while index + 1 < text.count {
            defer { index += 1 }
            let first = text[index + 1] & 0xDF  // upper case for letters
            guard text[index] == UInt8(ascii: "("), first >= 0x41, first <= 0x5A, first != UInt8(ascii: "E") else {
                continue
            }
            let start = index + 1
            var cursor = start
            while cursor < text.count, text[cursor] != UInt8(ascii: ")") { cursor += 1 }
            if !isOne(of: advanceNotes, text, start, cursor) { return upperCased(text, start, cursor) }
        }
        return nil
    }

    /// Parses an event given as a String (tests, tools).
    package static func parse(_ text: String) throws(EventTextError) -> Play {
        var bytes = Array(text.utf8)
        let result = bytes.withUnsafeMutableBufferPointer { buffer -> Result<Play, EventTextError> in
            do throws(EventTextError) {
                return .success(try parse(UnsafeBufferPointer(buffer)))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }
}

/// The recursive-descent reader behind `EventTextParser`. `symbol` is the character under the
/// cursor (0 past the end); `#` and `!` (uncertain and great plays) are skipped everywhere but the
/// first character.
private struct EventTextScanner {
    private let input: UnsafeBufferPointer<UInt8>
    private let count: Int
    private let hasGDP: Bool
    private var position = 1
    private var symbol: UInt8
    private var play = Play(eventType: .unknown)
    /// Runs batted in while reading: 0 none, 1 credited, 2 marked `(RBI)`, -1 denied by an error.
    private var rbi = PerBase<Int8>(repeating: 0)
    private var forcedOrChosen = BaseFlags()

    init(_ input: UnsafeBufferPointer<UInt8>, count: Int, hasGDP: Bool) {
        self.input = input
        self.count = count
        self.hasGDP = hasGDP
        self.symbol = count > 0 ? input[0] : 0
    }

    // MARK: Characters

    @discardableResult
    private mutating func next() -> UInt8 {
        if position > count {
            symbol = 0
        } else {
            repeat {
                symbol = position < count ? input[position] : 0
                position += 1
            } while symbol == UInt8(ascii: "#") || symbol == UInt8(ascii: "!")
        }
        return symbol
    }

    private var offset: Int { max(0, position - 1) }

    private func invalid(_ reason: String) -> EventTextError {
        EventTextError(offset: offset, reason: reason)
    }

    private var symbolText: String {
        symbol == 0 ? "end of event" : "'\(String(decoding: [symbol], as: UTF8.self))'"
    }

    private static func isFielder(_ byte: UInt8) -> Bool {
        (byte >= 0x31 && byte <= 0x39) || byte == UInt8(ascii: "?")
    }

    private static func isLetter(_ byte: UInt8) -> Bool { byte >= 0x41 && byte <= 0x5A }

    /// Where a runner written as put out in a fielding credit (`64(1)`, `8(B)84(2)`) was put out:
    /// the base the last fielder covers (first baseman first, middle infielders second, third
    /// baseman third, catcher home) when it is his own or the next; else the next base when he was
    /// forced, his own when he was doubled off after a catch.
    static func outBase(runner: Int, fielder: UInt8, forced: Bool) -> UInt8 {
        let covered: Int? =
            switch fielder {
            case UInt8(ascii: "3"): 1
            case UInt8(ascii: "4"), UInt8(ascii: "6"): 2
            case UInt8(ascii: "5"): 3
            case UInt8(ascii: "2"): 4
            default: nil
            }
        if let covered, covered == runner || covered == runner + 1 { return UInt8(covered) }
        return UInt8(forced ? min(runner + 1, 4) : runner)
    }

    private static func isFlagEnd(_ byte: UInt8) -> Bool {
        switch byte {
        case 0, UInt8(ascii: "/"), UInt8(ascii: "."), UInt8(ascii: "#"), UInt8(ascii: "!"), UInt8(ascii: "+"),
            UInt8(ascii: "-"):
            return true
        default:
            return false
        }
    }

    /// Consecutive letters.
    private mutating func word() -> Token {
        var token = Token()
        while Self.isLetter(symbol) {
            token.append(symbol)
            next()
        }
        return token
    }

    /// A modifier after `/`, up to the next separator or parenthesis.
    private mutating func flag() -> Token {
        var token = Token()
        while true {
            next()
            switch symbol {
            case 0, UInt8(ascii: "/"), UInt8(ascii: "."), UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "#"),
                UInt8(ascii: "!"), UInt8(ascii: "+"), UInt8(ascii: "-"):
                return token
            default:
                token.append(symbol)
            }
        }
    }

    // MARK: The event

    mutating func parseEvent() throws(EventTextError) -> Play {
        let code = word()
        try basicPlay(code)
        if symbol == UInt8(ascii: ".") {
            repeat {
                next()
                try runnerAdvance()
            } while symbol == UInt8(ascii: ";")
            guard symbol == 0 else {
                throw invalid("expected ';' or the end after a runner advance, found \(symbolText)")
            }
        }
        if symbol == UInt8(ascii: "+") || symbol == UInt8(ascii: "-") || symbol == UInt8(ascii: "#") {
            next()
        }
        guard symbol == 0 else { throw invalid("unexpected \(symbolText)") }
        finish()
        return play
    }

    private mutating func basicPlay(_ code: Token) throws(EventTextError) {
        if code.isEmpty {
            play.eventType = .genericOut
            guard Self.isFielder(symbol) else {
                throw invalid("expected an event code or a fielder, found \(symbolText)")
            }
            try genericOut()
            return
        }
        switch code {
        case .bk: play.eventType = .balk; skipFlags()
        case .c: play.eventType = .interference; try interference()
        case .cs: play.eventType = .caughtStealing; try caughtStealing(flags: true)
        case .d: play.eventType = .double; baseHit()
        case .dgr: play.eventType = .double; groundRuleDouble()
        case .di: play.eventType = .defensiveIndifference
        case .e: play.eventType = .error; try reachedOnError()
        case .fc: play.eventType = .fieldersChoice; fieldersChoice()
        case .fle: play.eventType = .foulError; try foulError()
        case .h, .hr: play.eventType = .homeRun; baseHit()
        case .hp:
            play.eventType = .hitByPitch
            play.advances.batter = .first
            skipFlags()
        case .i, .iw: play.eventType = .intentionalWalk; try walk()
        case .k: play.eventType = .strikeout; try strikeout()
        case .ke: play.eventType = .strikeout; try strikeoutError()
        case .oa: play.eventType = .otherAdvance; try otherAdvance()
        case .pb: play.eventType = .passedBall; play.modifiers.insert(.passedBall); doublePlayFlags()
        case .po: play.eventType = .pickoff; try pickoff(flags: true)
        case .pocs: play.eventType = .pickoff; try pickoffCaughtStealing(flags: true)
        case .posb: play.eventType = .stolenBase; try stolenBase(flags: true)
        case .s: play.eventType = .single; baseHit()
        case .sb: play.eventType = .stolenBase; try stolenBase(flags: true)
        case .t: play.eventType = .triple; baseHit()
        case .w: play.eventType = .walk; try walk()
        case .wp: play.eventType = .wildPitch; play.modifiers.insert(.wildPitch); doublePlayFlags()
        default:
            throw EventTextError(offset: 0, reason: "unknown event code")
        }
    }

    // MARK: Fielding credits

    /// Reads a fielding credit such as `64`, `2E5`, `E6`. `previous` is the fielder of the prior
    /// credit in the same play (so `64(1)3` credits `43`). Returns whether the credit contains an
    /// error (the batter or runner is safe).
    private mutating func fieldingCredit(previous: UInt8) throws(EventTextError) -> (FieldingCredit, safe: Bool) {
        var credit = FieldingCredit()
        if symbol == UInt8(ascii: "E") {
            next()
            guard Self.isFielder(symbol) else { throw invalid("expected a fielder after E, found \(symbolText)") }
            if symbol.isDigit && play.eventType != .interference {
                play.errors.append(symbol &- 0x30)
            }
            credit.append(UInt8(ascii: "E"))
            credit.append(symbol)
            next()
            return (credit, true)
        }
        if previous != 0 && previous != symbol {
            credit.append(previous)
        }
        credit.append(symbol)
        while true {
            next()
            if (symbol >= 0x31 && symbol <= 0x39) || symbol == UInt8(ascii: "?") {
                if symbol != UInt8(ascii: "?") { credit.append(symbol) }
            } else if symbol == UInt8(ascii: "E") {
                credit.append(symbol)
                next()
                guard symbol.isDigit else { throw invalid("expected a fielder after E, found \(symbolText)") }
                play.errors.append(symbol &- 0x30)
                credit.append(symbol)
                next()
                return (credit, true)
            } else {
                return (credit, false)
            }
        }
    }

    // MARK: Basic plays

    private mutating func genericOut() throws(EventTextError) {
        if symbol != UInt8(ascii: "?") { play.fieldedBy = symbol &- 0x30 }
        play.advances.batter = .first
        var lastFielder: UInt8 = 0
        var firstOutWasForce: Bool?
        while Self.isFielder(symbol) {
            let (credit, safe) = try fieldingCredit(previous: lastFielder)
            if symbol == UInt8(ascii: "(") {
                next()
                let base: Int
                switch symbol {
                case UInt8(ascii: "B"): base = 0
                case UInt8(ascii: "1"), UInt8(ascii: "2"), UInt8(ascii: "3"): base = Int(symbol &- 0x30)
                default: throw invalid("expected B, 1, 2 or 3 for the runner put out, found \(symbolText)")
                }
                next()
                guard symbol == UInt8(ascii: ")") else { throw invalid("expected ')', found \(symbolText)") }
                next()
                if firstOutWasForce == nil { firstOutWasForce = base > 0 }
                play.advances[base] = safe ? .base(base + 1) : .none
                if !safe && base > 0 {
                    play.outAt[base] = Self.outBase(
                        runner: base, fielder: credit.last, forced: firstOutWasForce == true)
                }
                forcedOrChosen[base] = true
                if play.battedBall == nil {
                    play.battedBall = credit.count > 1 || base > 0 ? .groundBall : .flyBall
                }
                play.credits[base] = credit
                lastFielder = credit.last
            } else {
                play.battedBall = credit.count > 1 || lastFielder != 0 ? .groundBall : .flyBall
                play.credits.batter = credit
                play.advances.batter = safe ? .first : .none
                break
            }
        }
        if symbol == UInt8(ascii: "+") || symbol == UInt8(ascii: "-") { next() }
        if symbol == UInt8(ascii: "/") { modifiers() }
        // When the first out is the batter's (a ball caught in the air), runners put out after it
        // were not forced, so responsibility does not pass back; a reverse-force double play is
        // the exception.
        if firstOutWasForce == false && !hasGDP {
            forcedOrChosen.remove([.first, .second, .third])
        }
    }

    private mutating func baseHit() {
        if Self.isFielder(symbol) || symbol == UInt8(ascii: "0") {
            if symbol.isDigit { play.fieldedBy = symbol &- 0x30 }
            while Self.isFielder(symbol) || symbol == UInt8(ascii: "0") { next() }
        }
        if symbol == UInt8(ascii: "/") { modifiers() }
    }

    private mutating func groundRuleDouble() {
        while symbol >= 0x31 && symbol <= 0x39 { next() }
        if symbol == UInt8(ascii: "/") { modifiers() }
    }

    private mutating func reachedOnError() throws(EventTextError) {
        play.advances.batter = .first
        guard symbol.isDigit else { throw invalid("expected the fielder who erred, found \(symbolText)") }
        play.errors.append(symbol &- 0x30)
        play.fieldedBy = symbol &- 0x30
        play.battedBall = symbol <= UInt8(ascii: "6") ? .groundBall : .flyBall
        next()
        if symbol == UInt8(ascii: "?") { next() }
        if symbol == UInt8(ascii: "/") { modifiers() }
    }

    private mutating func fieldersChoice() {
        play.advances.batter = .first
        play.battedBall = .groundBall
        if symbol >= 0x31 && symbol <= 0x39 {
            play.fieldedBy = symbol &- 0x30
            next()
        } else if symbol == UInt8(ascii: "?") {
            next()
        }
        if symbol == UInt8(ascii: "/") { modifiers() }
    }

    private mutating func foulError() throws(EventTextError) {
        guard symbol >= 0x31 && symbol <= 0x39 else {
            throw invalid("expected the fielder who dropped the foul, found \(symbolText)")
        }
        play.errors.append(symbol &- 0x30)
        play.fieldedBy = symbol &- 0x30
        next()
        if symbol == UInt8(ascii: "/") { modifiers() }
    }

    private mutating func interference() throws(EventTextError) {
        play.advances.batter = .first
        play.modifiers.insert(.interference)
        while symbol == UInt8(ascii: "/") {
            let token = flag()
            if token[0] == UInt8(ascii: "E") && !play.errors.isEmpty {
                throw invalid("interference charged to two fielders")
            }
            switch token {
            case Token("E2"): play.errors.append(2)
            case Token("E1"), Token("4E1"): play.errors.append(1)
            case Token("E3"): play.errors.append(3)
            case Token("E4"): play.errors.append(4)
            case Token("E6"): play.errors.append(6)
            case .int: break
            case .g: play.battedBall = .groundBall
            default: location(token, withTrajectory: token.length >= 2)
            }
        }
        if play.errors.isEmpty { play.errors.append(2) }
    }

    private mutating func walk() throws(EventTextError) {
        play.advances.batter = .first
        if symbol == UInt8(ascii: "+") {
            next()
            switch word() {
            case .wp: play.modifiers.insert(.wildPitch)
            case .pb: play.modifiers.insert(.passedBall)
            case .po: try pickoff(flags: false)
            case .posb: try stolenBase(flags: false)
            case .pocs: try pickoffCaughtStealing(flags: false)
            case .sb: try stolenBase(flags: false)
            case .cs: try caughtStealing(flags: false)
            case .e:
                guard symbol >= 0x31 && symbol <= 0x39 else {
                    throw invalid("expected the fielder who erred, found \(symbolText)")
                }
                play.errors.append(symbol &- 0x30)
                next()
            default: break  // DI, OA and anything else after '+' carries no further data
            }
        }
        while symbol == UInt8(ascii: "/") {
            let token = flag()
            if token.isThrowFlag {
                if !play.errors.isEmpty { play.modifiers.insert(.throwingError) }
            } else if token == .dp {
                play.modifiers.insert(.doublePlay)
            } else if token == .boot || token == .mrev || token == .urev || token == .uint || token == .cour
                || token[0] == UInt8(ascii: "R")
            {
                continue
            } else {
                throw invalid("modifier not allowed on a walk")
            }
        }
    }

    private mutating func strikeout() throws(EventTextError) {
        if symbol >= 0x31 && symbol <= 0x39 {
            let (credit, safe) = try fieldingCredit(previous: 0)
            play.advances.batter = safe ? .first : .none
            play.credits.batter = credit
        } else {
            play.credits.batter = FieldingCredit("2")
        }
        if symbol == UInt8(ascii: "+") {
            next()
            switch word() {
            case .wp: play.modifiers.insert(.wildPitch)
            case .pb: play.modifiers.insert(.passedBall)
            case .po: try? pickoff(flags: false)
            case .pocs: try? pickoffCaughtStealing(flags: false)
            case .posb: try? stolenBase(flags: false)
            case .sb: try? stolenBase(flags: false)
            case .cs: try? caughtStealing(flags: false)
            case .di, .oa, .oba: break
            case .e:
                guard symbol >= 0x31 && symbol <= 0x39 else {
                    throw invalid("expected the fielder who erred, found \(symbolText)")
                }
                play.errors.append(symbol &- 0x30)
                next()
            default:
                throw invalid("unknown play after K+")
            }
        }
        while symbol == UInt8(ascii: "/") {
            let token = flag()
            switch token {
            case .th, .th1, .th2, .th3, .thh: if !play.errors.isEmpty { play.modifiers.insert(.throwingError) }
            case .dp: play.modifiers.insert(.doublePlay)
            case .tp: play.modifiers.insert(.triplePlay)
            case .b, .bf, .bg, .bp: play.modifiers.insert(.bunt)
            case .fl: play.modifiers.insert(.foul)
            default: break  // other modifiers on strikeouts are tolerated, as in the reference files
            }
        }
    }

    private mutating func strikeoutError() throws(EventTextError) {
        guard symbol >= 0x31 && symbol <= 0x39 else {
            throw invalid("expected the fielder who erred, found \(symbolText)")
        }
        play.errors.append(symbol &- 0x30)
        var credit = FieldingCredit()
        credit.append(UInt8(ascii: "E"))
        credit.append(symbol)
        play.credits.batter = credit
        next()
    }

    private mutating func stolenBase(flags: Bool) throws(EventTextError) {
        switch symbol {
        case UInt8(ascii: "2"):
            play.stolenBases.insert(.first)
            play.advances.first = .second
            next()
        case UInt8(ascii: "3"):
            play.stolenBases.insert(.second)
            play.advances.second = .third
            next()
        case UInt8(ascii: "4"):
            play.stolenBases.insert(.third)
            play.advances.third = .home
            next()
            if symbol == UInt8(ascii: "(") {
                play.advances.third = .homeUnearned
                next()
                if symbol == UInt8(ascii: "T") {
                    play.advances.third = .homeTeamUnearned
                    next()
                }
                guard symbol == UInt8(ascii: "U") else { throw invalid("expected (UR) or (TUR)") }
                next()
                guard symbol == UInt8(ascii: "R") else { throw invalid("expected (UR) or (TUR)") }
                next()
                guard symbol == UInt8(ascii: ")") else { throw invalid("expected ')'") }
                next()
            }
        default:
            throw invalid("expected the base stolen (2, 3 or H), found \(symbolText)")
        }
        if symbol == UInt8(ascii: ";") {
            next()
            // A pickoff may follow since cwevent's grammar of 2026 (`SB2;PO1(13)`).
            switch word() {
            case .sb, .posb: try? stolenBase(flags: false)
            case .cs: try? caughtStealing(flags: false)
            case .pocs: try? pickoffCaughtStealing(flags: false)
            case .po: try? pickoff(flags: false)
            default: throw invalid("expected SB, CS, POSB, POCS or PO after ';'")
            }
        }
        if flags { skipFlags() }
    }

    private mutating func caughtStealing(flags: Bool) throws(EventTextError) {
        guard symbol >= UInt8(ascii: "2") && symbol <= UInt8(ascii: "4") else {
            throw invalid("expected the base of the attempt (2, 3 or H), found \(symbolText)")
        }
        let runner = Int(symbol &- 0x31)
        play.caughtStealing[runner] = true
        while next() == UInt8(ascii: "(") {
            next()
            if Self.isFielder(symbol) || symbol == UInt8(ascii: "E") {
                let startsWithError = symbol == UInt8(ascii: "E")
                let (credit, safe) = try fieldingCredit(previous: 0)
                if safe || startsWithError {
                    play.advances[runner] = .base(runner + 1)
                    play.credits[runner] = credit
                    if symbol == UInt8(ascii: "/") {
                        let token = flag()
                        if token.isThrowFlag {
                            play.modifiers.insert(.throwingError)
                            play.advanceErrors[runner] = AdvanceError(fielder: credit.errorFielder, throwing: true)
                        } else if token != .int {
                            throw invalid("modifier not allowed on an error in a caught stealing")
                        }
                    }
                } else {
                    play.credits[runner] = credit
                    play.outAt[runner] = UInt8(runner + 1)
                }
            } else if Self.isLetter(symbol) {
                let token = word()
                if token == .ur && play.advances[runner] == .home {
                    play.advances[runner] = .homeUnearned
                } else if token == .tur && play.advances[runner] == .home {
                    play.advances[runner] = .homeTeamUnearned
                } else {
                    throw invalid("unexpected modifier in a caught stealing")
                }
                guard symbol == UInt8(ascii: ")") else { throw invalid("expected ')', found \(symbolText)") }
            }
        }
        if symbol == UInt8(ascii: ";") {
            next()
            switch word() {
            case .cs: try caughtStealing(flags: false)
            case .sb, .posb: try stolenBase(flags: false)
            case .pocs: try pickoffCaughtStealing(flags: false)
            case .po: try pickoff(flags: false)
            default: throw invalid("expected CS, SB, POCS, POSB or PO after ';'")
            }
        }
        while flags && symbol == UInt8(ascii: "/") {
            if flag() == .dp { play.modifiers.insert(.doublePlay) }
        }
    }

    private mutating func pickoffCaughtStealing(flags: Bool) throws(EventTextError) {
        let runner = Int(symbol) - 0x31
        if (1...3).contains(runner) { play.pickedOff[runner] = true }
        try caughtStealing(flags: flags)
    }

    private mutating func pickoff(flags: Bool) throws(EventTextError) {
        guard symbol >= 0x31 && symbol <= 0x33 else {
            throw invalid("expected the base of the pickoff (1, 2 or 3), found \(symbolText)")
        }
        let runner = Int(symbol &- 0x30)
        play.pickedOff[runner] = true
        guard next() == UInt8(ascii: "(") else { throw invalid("expected '(' after the pickoff base") }
        next()
        if Self.isFielder(symbol) {
            play.credits[runner] = try fieldingCredit(previous: 0).0
            play.outAt[runner] = UInt8(runner)
        } else if symbol == UInt8(ascii: "E") {
            play.credits[runner] = try fieldingCredit(previous: 0).0
            if symbol == UInt8(ascii: "/") {
                guard flag().isThrowFlag else { throw invalid("modifier not allowed on a pickoff error") }
                play.modifiers.insert(.throwingError)
                play.advanceErrors[runner] = AdvanceError(fielder: play.credits[runner].errorFielder, throwing: true)
            }
        } else {
            throw invalid("expected the fielders of the pickoff, found \(symbolText)")
        }
        guard symbol == UInt8(ascii: ")") else { throw invalid("expected ')', found \(symbolText)") }
        next()
        if flags && symbol == UInt8(ascii: "/") { modifiers() }
    }

    private mutating func otherAdvance() throws(EventTextError) {
        while symbol == UInt8(ascii: "/") {
            let token = flag()
            switch token {
            case .bint, .int, .ap, .mrev, .urev, .ndp, .obs: break
            // A throw on the play (cwevent reads it since 2026).
            case .th, .th1, .th2, .th3, .thh: break
            case .dp: play.modifiers.insert(.doublePlay)
            case .tp: play.modifiers.insert(.triplePlay)
            default:
                guard token[0] == UInt8(ascii: "R") else {
                    throw invalid("modifier not allowed on an other advance")
                }
            }
        }
    }

    /// Modifiers of plays that take only a double-play flag (wild pitch, passed ball).
    private mutating func doublePlayFlags() {
        while symbol == UInt8(ascii: "/") {
            if flag() == .dp { play.modifiers.insert(.doublePlay) }
        }
    }

    /// Modifiers that carry nothing the engine uses (balk, hit by pitch, stolen base).
    private mutating func skipFlags() {
        while symbol == UInt8(ascii: "/") {
            let token = flag()
            if token == .rev || token == .mrev || token == .urev { play.modifiers.insert(.review) }
            if token == .obs { play.modifiers.insert(.obstruction) }
            if token == .int { play.modifiers.insert(.interference) }
        }
    }

    // MARK: Modifiers

    /// The `/` modifiers of a batted ball, up to the advances or the end.
    private mutating func modifiers() {
        repeat {
            var token = Token()
            repeat {
                next()
                if !Self.isFlagEnd(symbol) { token.append(symbol) }
            } while !Self.isFlagEnd(symbol)
            modifier(token)
        } while symbol != UInt8(ascii: ".") && symbol != 0
    }

    private mutating func modifier(_ token: Token) {
        switch token {
        case .sh, .sac: play.modifiers.formUnion([.sacrificeHit, .bunt])
        case .sf:
            play.modifiers.insert(.sacrificeFly)
            if play.battedBall == nil || (play.eventType == .error && play.battedBall == .groundBall) {
                play.battedBall = .flyBall
            }
        case .dp: play.modifiers.insert(.doublePlay)
        case .gdp:
            play.modifiers.formUnion([.doublePlay, .groundedIntoDoublePlay])
            play.battedBall = .groundBall
        case .ldp: play.modifiers.insert(.doublePlay); play.battedBall = .lineDrive
        case .fdp: play.modifiers.insert(.doublePlay); play.battedBall = .flyBall
        case .bgdp:
            play.modifiers.formUnion([.bunt, .doublePlay, .groundedIntoDoublePlay])
            play.battedBall = .groundBall
        case .bpdp: play.modifiers.formUnion([.bunt, .doublePlay]); play.battedBall = .popUp
        case .bfdp: play.modifiers.formUnion([.bunt, .doublePlay, .foul]); play.battedBall = .popUp
        case .tp: play.modifiers.insert(.triplePlay)
        case .gtp: play.modifiers.insert(.triplePlay); play.battedBall = .groundBall
        case .ltp: play.modifiers.insert(.triplePlay); play.battedBall = .lineDrive
        case .fl: play.modifiers.insert(.foul)
        case .fo:
            play.modifiers.insert(.force)
            if play.battedBall == nil { play.battedBall = .groundBall }
        case .th, .th1, .th2, .th3, .thh:
            if play.eventType == .error || play.eventType == .pickoffError { play.modifiers.insert(.throwingError) }
        case .b: play.modifiers.insert(.bunt)
        case .bg: play.modifiers.insert(.bunt); play.battedBall = .groundBall
        case .bp: play.modifiers.insert(.bunt); play.battedBall = .popUp
        case .bf: play.modifiers.insert(.bunt); play.battedBall = .flyBall
        case .bl: play.modifiers.insert(.bunt); play.battedBall = .lineDrive
        case .p: play.battedBall = .popUp
        case .f: play.battedBall = .flyBall
        case .g: play.battedBall = .groundBall
        case .l: play.battedBall = .lineDrive
        case .if: play.battedBall = .popUp; play.modifiers.insert(.infieldFly)
        default: location(token, withTrajectory: token.length >= 2)
        }
    }

    /// A trajectory and hit location such as `G6`, `L9LD`, `BP2F`, or a bare location.
    private mutating func location(_ token: Token, withTrajectory: Bool) {
        let bunt = token[0] == UInt8(ascii: "B")
        if withTrajectory {
            let trajectory = bunt ? token[1] : token[0]
            if let type = BattedBallType(rawValue: trajectory) {
                let place = token.dropFirst(bunt ? 2 : 1)
                if Token.locations.contains(place) {
                    play.battedBall = type
                    if place.isFoulLocation { play.modifiers.insert(.foul) }
                    if bunt { play.modifiers.insert(.bunt) }
                }
                return
            }
            let place = token.dropFirst(bunt ? 1 : 0)
            if Token.locations.contains(place) {
                if place.isFoulLocation { play.modifiers.insert(.foul) }
                if bunt { play.modifiers.insert(.bunt) }
            }
        }
    }

    // MARK: Advances

    private mutating func runnerAdvance() throws(EventTextError) {
        let from: Int
        switch symbol {
        case UInt8(ascii: "B"): from = 0
        case UInt8(ascii: "1"), UInt8(ascii: "2"), UInt8(ascii: "3"): from = Int(symbol &- 0x30)
        default: throw invalid("expected a runner (B, 1, 2 or 3), found \(symbolText)")
        }
        next()
        guard symbol == UInt8(ascii: "-") || symbol == UInt8(ascii: "X") else {
            throw invalid("expected '-' (safe) or 'X' (out), found \(symbolText)")
        }
        let safe = symbol == UInt8(ascii: "-")
        next()
        let to: Int
        switch symbol {
        case UInt8(ascii: "H"): to = 4
        case UInt8(ascii: "1"), UInt8(ascii: "2"), UInt8(ascii: "3"): to = Int(symbol &- 0x30)
        default: throw invalid("expected a base (1, 2, 3 or H), found \(symbolText)")
        }
        if safe {
            if to < 4 || !play.advances[from].scored {
                play.advances[from] = Destination(rawValue: UInt8(to))
            }
            if to == 4 && play.eventType.endsPlateAppearance && !play.modifiers.contains(.groundedIntoDoublePlay)
                && (play.eventType != .error || from == 3) && play.eventType != .strikeout && rbi[from] != -1
            {
                rbi[from] = 1
            }
        } else {
            play.advances[from] = .none
            if play.eventType == .fieldersChoice { forcedOrChosen[from] = true }
        }
        next()
        var isSafe = safe
        while symbol == UInt8(ascii: "(") {
            next()
            try advanceModifier(safe: &isSafe, from: from, to: to)
        }
        // Put out at the base he went for; safe, put out nowhere.
        play.outAt[from] = isSafe ? 0 : UInt8(to)
    }

    /// One parenthesised note on an advance: fielders (`(92)`, `(E2)`), `NR`, `RBI`, `UR`, `TUR`,
    /// `WP`, `PB`, `TH`, `INT`.
    private mutating func advanceModifier(safe: inout Bool, from: Int, to: Int) throws(EventTextError) {
        if Self.isFielder(symbol) || symbol == UInt8(ascii: "E") {
            var isError = symbol == UInt8(ascii: "E")
            let (credit, muffed) = try fieldingCredit(previous: 0)
            if muffed {
                isError = true
                if !safe {
                    // Out on the throw but safe on the error.
                    safe = true
                    if play.advances[from].rawValue < 5 { play.advances[from] = Destination(rawValue: UInt8(to)) }
                    for index in 0...from { rbi[index] = -1 }
                }
            }
            if credit.first != UInt8(ascii: "E") {
                play.credits[from] = credit
            } else {
                for index in 0...from { rbi[index] = -1 }
            }
            if isError, credit.errorFielder != 0 {
                play.advanceErrors[from] = AdvanceError(fielder: credit.errorFielder)
            }
            if symbol == UInt8(ascii: "/") {
                let token = flag()
                switch token {
                case .th, .th1, .th2, .th3, .thh:
                    if isError {
                        play.modifiers.insert(.throwingError)
                        play.advanceErrors[from].throwing = true
                    }
                case .int, .bint, .obs, .g, .u, .ap, .br, .fo: break
                // Another (`/RINT` in MIA201809210): the credit is read without it; the reader
                // warns (`unknownCreditFlag`). cwevent stops reading the event there, which keeps
                // the same credit.
                default: break
                }
            }
            if symbol == UInt8(ascii: "(") {
                next()
                try advanceModifier(safe: &safe, from: from, to: to)
            }
            while symbol != UInt8(ascii: ")") && symbol != 0 { next() }
        } else {
            let token = word()
            switch token {
            case .nr, .norbi: rbi[from] = 0
            case .rbi: if play.advances[from].scored { rbi[from] = 2 }
            case .ur: play.advances[from] = .homeUnearned
            case .tur: play.advances[from] = .homeTeamUnearned
            case .wp: play.modifiers.insert(.wildPitch); rbi[from] = 0
            case .pb: play.modifiers.insert(.passedBall); rbi[from] = 0
            case .th: if symbol >= 0x31 && symbol <= 0x33 { next() }
            case .thh, .int: break
            // A base stolen on the advance (`BK.1-2(SB)`, 2025), with or without the base.
            case .sb, .sbh:
                if (1...3).contains(from) { play.stolenBases.insert(.at(from)) }
                if token == .sb && symbol >= 0x32 && symbol <= 0x34 { next() }
            default: break
            }
            // Another note (`(OBS)`, `(RBI2)`): the advance is read without it, and the reader
            // warns (`unknownAdvanceNote`). cwevent stops reading the event there.
            while symbol != UInt8(ascii: ")") && symbol != 0 { next() }
        }
        guard symbol == UInt8(ascii: ")") else { throw invalid("expected ')', found \(symbolText)") }
        next()
    }

    // MARK: Defaults

    /// Implied advances and final clean-up once the whole text is read.
    private mutating func finish() {
        let batterUnmarked = play.advances.batter == .none && play.credits.batter.isEmpty
        switch play.eventType {
        case .single where batterUnmarked: play.advances.batter = .first
        case .double where batterUnmarked: play.advances.batter = .second
        case .triple where batterUnmarked: play.advances.batter = .third
        case .homeRun where batterUnmarked:
            play.advances.batter = .home
            rbi.batter = 1
        default: break
        }
        if play.eventType == .strikeout && play.credits.batter == FieldingCredit("2")
            && play.advances.batter != .none
        {
            // A strikeout on which the batter reached: no putout.
            play.credits.batter = FieldingCredit()
        }
        if play.eventType == .walk {
            rbi.batter = 0
            rbi.first = 0
            rbi.second = 0
        }
        if play.eventType == .foulError {
            play.modifiers.insert(.foul)
            if play.battedBall == nil { play.battedBall = play.errors[0] >= 7 ? .flyBall : .popUp }
        }
        for index in 0...3 {
            if play.credits[index].isPutOut {
                play.advances[index] = .none
                play.putOuts.insert(.at(index))
            }
            if !play.putOuts.contains(.at(index)) { play.outAt[index] = 0 }
            // An error in his credit (`CS2(2E4)`, `PO1(E1)`) let him stay or move on.
            if play.advanceErrors[index].isNone && play.credits[index].hasError {
                play.advanceErrors[index] = AdvanceError(fielder: play.credits[index].errorFielder)
            }
            switch rbi[index] {
            case 1: play.rbi[index] = .credited
            case 2: play.rbi[index] = .explicit
            default: play.rbi[index] = .none
            }
        }
        play.fieldersChoiceOuts = forcedOrChosen
        if play.eventType == .genericOut && play.battedBall == nil && !play.credits.batter.isEmpty {
            let single =
                play.credits.batter.count == 1
                && play.modifiers.isDisjoint(with: [.doublePlay, .triplePlay, .bunt])
            play.battedBall = single ? .flyBall : .groundBall
        }
        if play.eventType == .single && play.modifiers.contains(.bunt) && play.battedBall == nil {
            play.battedBall = .groundBall
        }
        if play.modifiers.contains(.sacrificeHit) { play.battedBall = .groundBall }
    }
}
