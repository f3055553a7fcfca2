/// A short token (an event code, a modifier) packed into a word for cheap comparisons.
/// Tokens longer than eight characters never equal a keyword.
struct Token: Hashable {
    private(set) var packed: UInt64 = 0
    private(set) var length = 0

    init() {}

    init(_ literal: StaticString) {
        let base = literal.utf8Start
        for index in 0..<literal.utf8CodeUnitCount { append(base[index]) }
    }

    mutating func append(_ byte: UInt8) {
        if length < 8 { packed |= UInt64(byte) << (UInt64(length) * 8) }
        length += 1
    }

    var isEmpty: Bool { length == 0 }

    /// The character at `index` (within the first eight).
    subscript(index: Int) -> UInt8 {
        index < min(length, 8) ? UInt8(truncatingIfNeeded: packed >> (UInt64(index) * 8)) : 0
    }

    /// The token without its first `count` characters.
    func dropFirst(_ count: Int) -> Token {
        var rest = Token()
        var index = count
        while index < length {
            rest.append(self[index])
            index += 1
        }
        if length > 8 { rest.length = length - count }
        return rest
    }

    var isThrowFlag: Bool {
        self == .th || self == .th1 || self == .th2 || self == .th3 || self == .thh
    }

    static let bk = Token("BK"), c = Token("C"), cs = Token("CS"), d = Token("D"), dgr = Token("DGR")
    static let di = Token("DI"), e = Token("E"), fc = Token("FC"), fle = Token("FLE"), h = Token("H")
    static let hp = Token("HP"), hr = Token("HR"), i = Token("I"), iw = Token("IW"), k = Token("K")
    static let ke = Token("KE"), oa = Token("OA"), oba = Token("OBA"), pb = Token("PB"), po = Token("PO")
    static let pocs = Token("POCS"), posb = Token("POSB"), s = Token("S"), sb = Token("SB"), t = Token("T")
    static let w = Token("W"), wp = Token("WP"), sbh = Token("SBH")

    static let nr = Token("NR"), norbi = Token("NORBI"), rbi = Token("RBI"), ur = Token("UR"), tur = Token("TUR")
    static let th = Token("TH"), th1 = Token("TH1"), th2 = Token("TH2"), th3 = Token("TH3"), thh = Token("THH")
    static let int = Token("INT"), bint = Token("BINT"), obs = Token("OBS"), g = Token("G"), u = Token("U")
    static let ap = Token("AP"), br = Token("BR"), fo = Token("FO"), dp = Token("DP"), tp = Token("TP")
    static let ndp = Token("NDP"), mrev = Token("MREV"), urev = Token("UREV"), boot = Token("BOOT")
    static let uint = Token("UINT"), cour = Token("COUR"), rev = Token("REV")
    static let sh = Token("SH"), sac = Token("SAC"), sf = Token("SF"), gdp = Token("GDP"), ldp = Token("LDP")
    static let fdp = Token("FDP"), bgdp = Token("BGDP"), bpdp = Token("BPDP"), bfdp = Token("BFDP")
    static let gtp = Token("GTP"), ltp = Token("LTP"), fl = Token("FL"), b = Token("B"), bg = Token("BG")
    static let bp = Token("BP"), bf = Token("BF"), bl = Token("BL"), p = Token("P"), f = Token("F"), l = Token("L")
    static let `if` = Token("IF")

    /// Hit locations of Retrosheet's diagram, with the nonstandard ones that occur in real files.
    static let locations: Set<Token> = {
        let names: [StaticString] = [
            "1", "13", "15", "1S", "2", "2F", "23", "23F", "25", "25F", "3SF", "3F", "3DF", "3S", "3", "3D", "34S",
            "34", "34D", "4S", "4", "4D", "4MS", "4M", "4MD", "6MS", "6M", "6MD", "6S", "6", "6D", "56S", "56", "56D",
            "5S", "5", "5D", "5SF", "5F", "5DF", "7LSF", "7LS", "7S", "78S", "8S", "89S", "9S", "9LS", "9LSF", "7LF",
            "7L", "7", "78", "8", "89", "9", "9L", "9LF", "7LDF", "7LD", "7D", "78D", "8D", "89D", "9D", "9LD", "9LDF",
            "78XD", "8XD", "89XD", "13S", "15S", "2LF", "2RF", "2L", "2R", "3L", "46", "5L", "7LDW", "7DW", "78XDW",
            "8XDW", "89XDW", "9DW", "9LDW", "7LMF", "7LM", "7M", "78M", "8LM", "8M", "8RM", "89M", "9M", "9LM", "9LMF",
            "8LS", "8RS", "8LD", "8RD", "8LXD", "8RXD", "8LXDW", "8RXDW",
        ]
        return Set(names.map(Token.init))
    }()

    /// Whether the location ends in F (foul territory).
    var isFoulLocation: Bool { length > 0 && self[min(length, 8) - 1] == UInt8(ascii: "F") }
}
