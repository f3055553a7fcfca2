import Baseball
import Testing

@Suite struct RunsByInningTests {
    /// Pirates at White Sox, 2020-08-25 (Giolito's no-hitter): 0-4, the White Sox not batting in
    /// the 9th.
    @Test func aLineReadsAsOnAScoreboardWithXForTheBottomNotBatted() {
        var line = RunsByInning()
        for inning in 1...9 {
            line.begin(inning: inning, side: .away)
            if inning < 9 { line.begin(inning: inning, side: .home) }
        }
        line.add(3, inning: 1, side: .home)
        line.add(1, inning: 4, side: .home)
        #expect(line.cells(.away, final: true) == ["0", "0", "0", "0", "0", "0", "0", "0", "0"])
        #expect(line.cells(.home, final: true) == ["3", "0", "0", "1", "0", "0", "0", "0", "x"])
        #expect(line.cells(.home, final: false).last == "")
        #expect(line.total(.home) == 4 && line.total(.away) == 0)
        #expect(line.innings == 9)
        // Runs in a half not begun begin it.
        line.add(2, inning: 10, side: .away)
        #expect(line.away.count == 10 && line.away.last == 2)
    }
}
