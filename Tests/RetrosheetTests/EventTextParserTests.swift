import Baseball
import Retrosheet
import Testing

/// The event grammar, one case per construction. Destinations are written batter, first, second,
/// third: `-` not mentioned or out, `1`-`3` a base, `H` scored, `U` scored unearned, `T` scored
/// unearned to the team.
@Suite struct EventTextParserTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var text: String
        var type: EventType
        var advances: String
        var outs: String = ""
        var rbi = 0
        var errors = 0
        var modifiers: PlayModifiers = []
        var testDescription: String { text }
    }

    static func destinations(_ play: Play) -> String {
        (0...3).map { index -> String in
            switch play.advances[index] {
            case .none: "-"
            case .home: "H"
            case .homeUnearned: "U"
            case .homeTeamUnearned: "T"
            default: "\(play.advances[index].rawValue)"
            }
        }.joined()
    }

    static func outs(_ play: Play) -> String {
        ["B", "1", "2", "3"].enumerated().filter { play.putOuts[$0.offset] }.map(\.element).joined()
    }

    @Test(arguments: [
        // Hits, with fielders, trajectories and locations.
        Case(text: "S8/G4M", type: .single, advances: "1---"),
        Case(text: "D7/L78XD+.1-H", type: .double, advances: "2H--", rbi: 1),
        Case(text: "T8/F89XD+.2-H", type: .triple, advances: "3-H-", rbi: 1),
        Case(text: "HR/F78XD.2-H;1-H", type: .homeRun, advances: "HHH-", rbi: 3),
        Case(text: "H/F7D", type: .homeRun, advances: "H---", rbi: 1),
        Case(text: "DGR/L9LS.2-H", type: .double, advances: "2-H-", rbi: 1),
        Case(text: "S8.BX2(84)", type: .single, advances: "----", outs: "B"),
        // Outs: fly, ground, force, double and triple plays, explicit batter.
        Case(text: "8/F8XD", type: .genericOut, advances: "----", outs: "B"),
        Case(text: "63/G6", type: .genericOut, advances: "----", outs: "B"),
        Case(text: "64(1)/FO/G6.2-3;B-1", type: .genericOut, advances: "1-3-", outs: "1", modifiers: .force),
        Case(
            text: "64(1)3/GDP/G6", type: .genericOut, advances: "----", outs: "B1",
            modifiers: [.doublePlay, .groundedIntoDoublePlay]),
        Case(text: "8(B)84(2)/LDP/L8", type: .genericOut, advances: "----", outs: "B2", modifiers: .doublePlay),
        Case(text: "5(2)4(1)3/GTP", type: .genericOut, advances: "----", outs: "B12", modifiers: .triplePlay),
        Case(text: "8/SF/F89D.3-H", type: .genericOut, advances: "---H", outs: "B", rbi: 1, modifiers: .sacrificeFly),
        Case(
            text: "13/SH/BG15.1-2", type: .genericOut, advances: "-2--", outs: "B",
            modifiers: [.sacrificeHit, .bunt]),
        Case(
            text: "54(B)/BG25/SH.1-2", type: .genericOut, advances: "-2--", outs: "B",
            modifiers: [.sacrificeHit, .bunt]),
        Case(text: "63/G6.3-H(NR)", type: .genericOut, advances: "---H", outs: "B"),
        Case(text: "4E3/G4.B-2", type: .genericOut, advances: "2---", errors: 1),
        // Strikeouts, alone and with a second play.
        Case(text: "K", type: .strikeout, advances: "----", outs: "B"),
        Case(text: "K23", type: .strikeout, advances: "----", outs: "B"),
        Case(text: "K+WP.B-1", type: .strikeout, advances: "1---", modifiers: .wildPitch),
        Case(text: "K+SB2", type: .strikeout, advances: "-2--", outs: "B"),
        Case(text: "K+CS2(26)/DP", type: .strikeout, advances: "----", outs: "B1", modifiers: .doublePlay),
        Case(text: "K+PO1(13)", type: .strikeout, advances: "----", outs: "B1"),
        Case(text: "K+E2.B-1", type: .strikeout, advances: "1---", errors: 1),
        Case(text: "K.3-H", type: .strikeout, advances: "---H", outs: "B"),
        // Walks and the like.
        Case(text: "W", type: .walk, advances: "1---"),
        Case(text: "W.3-H;2-3;1-2", type: .walk, advances: "123H", rbi: 1),
        Case(text: "IW", type: .intentionalWalk, advances: "1---"),
        Case(text: "I", type: .intentionalWalk, advances: "1---"),
        Case(text: "W+WP.2-3", type: .walk, advances: "1-3-", modifiers: .wildPitch),
        Case(text: "W+SB2", type: .walk, advances: "12--"),
        Case(text: "HP", type: .hitByPitch, advances: "1---"),
        Case(text: "HP.1-2", type: .hitByPitch, advances: "12--"),
        Case(text: "C/E2.1-2", type: .interference, advances: "12--", errors: 1, modifiers: .interference),
        Case(text: "C/E1", type: .interference, advances: "1---", errors: 1, modifiers: .interference),
        // Errors and fielder's choices.
        Case(text: "E6/G6", type: .error, advances: "1---", errors: 1),
        Case(text: "E5/TH.B-2", type: .error, advances: "2---", errors: 1, modifiers: .throwingError),
        Case(text: "FC5/G5.3XH(52);B-1", type: .fieldersChoice, advances: "1---", outs: "3"),
        Case(text: "FC6.2-3;B-1", type: .fieldersChoice, advances: "1-3-"),
        Case(text: "FLE7", type: .foulError, advances: "----", errors: 1, modifiers: .foul),
        // Base running without a batter.
        Case(text: "SB2", type: .stolenBase, advances: "-2--"),
        Case(text: "SB3;SB2", type: .stolenBase, advances: "-23-"),
        Case(text: "SBH", type: .stolenBase, advances: "---H"),
        Case(text: "SBH(UR)", type: .stolenBase, advances: "---U"),
        Case(text: "CS2(26)", type: .caughtStealing, advances: "----", outs: "1"),
        Case(text: "CS2(2E6).1-3", type: .caughtStealing, advances: "-3--", errors: 1),
        Case(text: "CSH(12)", type: .caughtStealing, advances: "----", outs: "3"),
        Case(text: "POCS2(1361)", type: .pickoff, advances: "----", outs: "1"),
        Case(text: "PO1(13)", type: .pickoff, advances: "----", outs: "1"),
        Case(text: "PO1(E3).1-2", type: .pickoff, advances: "-2--", errors: 1),
        Case(text: "WP.2-3", type: .wildPitch, advances: "--3-", modifiers: .wildPitch),
        Case(text: "PB.1-2", type: .passedBall, advances: "-2--", modifiers: .passedBall),
        Case(text: "BK.3-H;1-2", type: .balk, advances: "-2-H"),
        Case(text: "DI.1-2", type: .defensiveIndifference, advances: "-2--"),
        Case(text: "OA.1X2(26)", type: .otherAdvance, advances: "----", outs: "1"),
        // Advances: unearned runs, errors on the throw, a runner out then safe on an error.
        Case(text: "S7/G56.3-H;2-H(UR);1-2", type: .single, advances: "12UH", rbi: 2),
        Case(text: "S9/L9S.2-H(E9/TH)(NR);B-2", type: .single, advances: "2-H-", errors: 1),
        Case(text: "D7.1XH(7E2)", type: .double, advances: "2H--", errors: 1),
        Case(text: "S8.2-H(TUR)", type: .single, advances: "1-T-", rbi: 1),
        Case(
            text: "E1/TH/BG.3-H(UR);B-1", type: .error, advances: "1--U", rbi: 1, errors: 1, modifiers: .throwingError),
        Case(text: "63/G6.3-H(RBI)", type: .genericOut, advances: "---H", outs: "B", rbi: 1),
        Case(text: "S9/L9S#.1-3", type: .single, advances: "13--"),
        Case(text: "s8/g", type: .single, advances: "1---"),
    ])
    func parsesEvent(_ expected: Case) throws {
        let play = try EventTextParser.parse(expected.text)
        #expect(play.eventType == expected.type)
        #expect(Self.destinations(play) == expected.advances)
        #expect(Self.outs(play) == expected.outs)
        #expect(play.runsBattedIn == expected.rbi)
        #expect(play.errors.count == expected.errors)
        #expect(play.modifiers.isSuperset(of: expected.modifiers))
    }

    /// A note the grammar does not have on an advance is read as if it were not there (the reader
    /// warns, `EventFileReader`); one it has is kept.
    @Test func advanceNotesOutsideTheGrammarAreLeftAndKnownOnesKept() throws {
        #expect(try EventTextParser.parse("S8.2-H(ZZ)") == (try EventTextParser.parse("S8.2-H")))
        #expect(try EventTextParser.parse("WP.1-2(OBS);3-H") == (try EventTextParser.parse("WP.1-2;3-H")))
        // A base stolen on a balk (2025), with or without the base.
        for text in ["BK.1-2(SB)", "BK.1-2(SB2)", "OA.2-3(SB)"] {
            let play = try EventTextParser.parse(text)
            #expect(play.stolenBases == (text.hasPrefix("OA.2") ? .second : .first), "\(text)")
        }
        #expect(try EventTextParser.parse("OA/TH.1-2").advances.first == .second)
        // A pickoff as the second half of a steal (cwevent's grammar of 2026).
        for text in ["CS2(24);PO1(13)", "SB2;PO1(13)", "SB2;POCS2(14)"] {
            #expect(throws: Never.self, "\(text)") { _ = try EventTextParser.parse(text) }
        }
        let notes = ["S8.2-H(UR);1-3(XYZ)", "S8.2-H(NR)(E4/TH);1-3(SB3)"].map { text in
            Array(text.utf8).withUnsafeBufferPointer { EventTextParser.unknownAdvanceNote($0) }
        }
        #expect(notes == ["XYZ", nil])
    }

    @Test(arguments: [
        ("Q8", "unknown event code"),
        ("", "empty event"),
        ("S8.B-", "expected a base"),
        ("S8.B-5", "expected a base"),
        ("S8.4-H", "expected a runner"),
        ("S8.1*2", "expected '-' (safe) or 'X' (out)"),
        ("64(4)3", "expected B, 1, 2 or 3"),
        ("64(1", "expected ')'"),
        ("CS5(26)", "expected the base of the attempt"),
        ("PO4(13)", "expected the base of the pickoff"),
        ("K+XYZ", "unknown play after K+"),
        ("W/FOO", "modifier not allowed on a walk"),
        ("E", "expected the fielder who erred"),
        ("FLE", "expected the fielder who dropped the foul"),
        ("SB5", "expected the base stolen"),
        ("S8 ", "unexpected"),
    ])
    func rejectsMalformedEvent(text: String, reason: String) {
        #expect {
            _ = try EventTextParser.parse(text)
        } throws: { error in
            String(describing: error).contains(reason)
        }
    }
}
