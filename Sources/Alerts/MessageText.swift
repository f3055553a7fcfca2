import Baseball

/// An alert as a person reads it.
package struct AlertMessage: Sendable, Hashable, Codable {
    package var title: String
    package var body: String
    /// Groups a bid's alerts together (notification thread, collapse id, Web Push topic).
    package var bidKey: String
}

/// Every user-facing string, in one place, per language. `{name}` placeholders are filled by
/// `MessageText`.
package struct MessageStrings: Sendable {
    package var noHitter: String
    package var perfectGame: String
    package var combinedNoHitter: String
    package var titleProgress: String
    package var bodyProgress: String
    package var titleNinthOut: String
    /// "One out", "Two outs".
    package var ninthOuts: [Int: String]
    /// Another out while hitless (an odds alert, `hitless-out`).
    package var titleOut: String
    package var bodyOut: String
    /// The bid's one chance, after a live bid's alert: "Chance: 54% (42 of 78 bids since 1988
    /// through 8 innings on 90 to 104 pitches ended as no-hitters)."
    package var history: String
    /// A live bid that cannot count whatever happens: "It cannot count as an official no-hitter: a
    /// 7-inning doubleheader game."
    package var cannotCount: String
    package var cannotCountWhy: [UnofficialReason: String]
    /// A completed no-hitter's last out: "The last out: {play}."
    package var lastOut: String
    package var titlePerfectLost: String
    package var bodyPerfectLost: String
    package var titlePitchingChange: String
    package var bodyPitchingChange: String
    package var titleBrokenUp: String
    package var bodyBrokenUp: String
    package var titleCompleted: String
    package var bodyCompleted: String
    package var titleNotOfficial: String
    package var bodyNotOfficial: String
    package var titleRevived: String
    package var bodyRevived: String
    package var score: String
    package var top: String
    package var bottom: String
    package var endOf: String
    /// By outs in the inning (0-2).
    package var outsIn: [Int: String]
    package var watch: String
    package var listen: String
    package var events: [EventType: String]
    package var reasons: [UnofficialReason: String]
    package var jinxWord: String
    /// "no-hit" as a verb, and how jinx-safe wording says it.
    package var noHitVerb: String
    package var jinxNoHitVerb: String
    package var jinxPerfect: String
    package var titleGameStart: String
    package var bodyGameStart: String
    package var titleLeadChange: String
    package var bodyLeadChange: String
    package var titleFinal: String
    /// A final score of a game not of nine innings: `Final/10`.
    package var finalInnings: String
    package var bodyFinal: String
    package var bodyFinalInnings: String
    package var bodyFinalTie: String

    package static let english = MessageStrings(
        noHitter: "no-hitter", perfectGame: "perfect game", combinedNoHitter: "combined no-hitter",
        titleProgress: "{pitcher}: {kind} through {innings}",
        bodyProgress:
            "The {pitchingTeam} have held the {battingTeam} hitless through {innings} innings. {score}, {situation}.",
        titleNinthOut: "{ninthOuts} in the 9th: {pitcher}'s {kind}",
        ninthOuts: [1: "One out", 2: "Two outs"],
        titleOut: "{pitcher}: {kind} through {outsSoFar} outs",
        bodyOut:
            "The {pitchingTeam} have held the {battingTeam} hitless through {outsSoFar} outs. {score}, {situation}.",
        history: "Chance: {chance} ({base} ended as no-hitters).",
        cannotCount: "It cannot count as an official {kind}: {why}.",
        cannotCountWhy: [
            .sevenInningDoubleheader: "a 7-inning doubleheader game",
            .shortenedGame: "the game is being called before nine innings",
            .brokenInExtraInnings: "the first hit came in extra innings",
            .roadTeamLostInEightInnings: "the road team is losing, so it pitches only 8 innings",
        ],
        lastOut: "The last out: {play}.",
        titlePerfectLost: "Perfect game over, {kind} alive",
        bodyPerfectLost: "{batter} reached ({event}), {situation}. Still no hits for the {battingTeam}. {score}.",
        titlePitchingChange: "{newPitcher} takes over the {kind}",
        bodyPitchingChange:
            "The {pitchingTeam} are still working on a {kind} after {outsSoFar} outs. {score}, {situation}.",
        titleBrokenUp: "{kind} broken up",
        bodyBrokenUp: "{batter} broke it up with {event} off {pitcher}, {situation}. {score}.",
        titleCompleted: "{Kind}! {pitchers}",
        bodyCompleted: "The {pitchingTeam} {noHit} the {battingTeam}. Final: {score}.",
        titleNotOfficial: "Hitless, but not an official {kind}",
        bodyNotOfficial:
            "The {pitchingTeam} held the {battingTeam} without a hit, but it does not count: {reason}. Final: {score}.",
        titleRevived: "Scoring change: the {kind} is alive again",
        bodyRevived:
            "The hit was changed to an error. The {pitchingTeam} are hitless through {outsSoFar} outs. {score}.",
        score: "{away} {awayRuns}, {home} {homeRuns}", top: "top", bottom: "bottom",
        endOf: "end of the {half} of the {inning}",
        outsIn: [
            0: "nobody out in the {half} of the {inning}", 1: "1 out in the {half} of the {inning}",
            2: "2 outs in the {half} of the {inning}",
        ], watch: "Watch: {list}.", listen: "Listen: {list}.",
        events: [
            .single: "a single", .double: "a double", .triple: "a triple", .homeRun: "a home run", .walk: "a walk",
            .intentionalWalk: "an intentional walk", .hitByPitch: "a hit by pitch", .error: "an error",
            .interference: "catcher's interference", .fieldersChoice: "a fielder's choice",
            .strikeout: "a dropped third strike",
        ],
        reasons: [
            .shortenedGame: "the game was called before nine innings",
            .sevenInningDoubleheader: "it was a 7-inning doubleheader game",
            .brokenInExtraInnings: "the first hit came in extra innings",
            .roadTeamLostInEightInnings: "the road team lost, so it pitched only 8 innings",
        ],
        jinxWord: "No-H****r", noHitVerb: "no-hit", jinxNoHitVerb: "did not allow a hit to",
        jinxPerfect: "P*****t game",
        titleGameStart: "{away} at {home}: first pitch", bodyGameStart: "{away} at {home} is under way.",
        titleLeadChange: "{leader} lead {leaderRuns}-{trailerRuns}",
        bodyLeadChange: "{leader} {leaderRuns}, {trailer} {trailerRuns}, {situation}.",
        titleFinal: "{final}: {winner} {winnerRuns}, {loser} {loserRuns}", finalInnings: "Final/{innings}",
        bodyFinal: "The {winner} beat the {loser} {winnerRuns}-{loserRuns}.",
        bodyFinalInnings: "The {winner} beat the {loser} {winnerRuns}-{loserRuns} in {innings} innings.",
        bodyFinalTie: "The {away} and the {home} tied {winnerRuns}-{loserRuns}."
    )

    /// Strings by language; English is the fallback.
    package static func forLanguage(_ language: String) -> MessageStrings {
        english
    }
}

/// Writes the alert for a moment.
package enum MessageText {
    /// Alerts must fit an APNs payload (4096 bytes) with room for the rest of the JSON.
    package static let maximumTextBytes = 3000

    /// The alert for `moment`; `teamNames` are the device's own names for teams (by franchise).
    package static func render(
        _ moment: Moment, game: GameInfo, jinxSafe: Bool = false, teamNames: [String: String] = [:],
        strings: MessageStrings = .english
    ) -> AlertMessage {
        var game = game
        for side in Side.allCases {
            guard let name = teamNames[game.team(side).club.franchise] else { continue }
            if side == .away { game.away.nickname = name } else { game.home.nickname = name }
        }
        if moment.kind.isScore { return renderScore(moment, game: game, strings: strings) }
        if let deal = moment.deal { return renderDeal(deal, bidKey: moment.bidKey) }
        let pitching = game.team(moment.pitchingSide)
        let batting = game.team(moment.pitchingSide.opponent)
        let pitchers = moment.pitchers.map { game.name(of: $0) }
        let combined = moment.pitchers.count > 1
        var kind = moment.perfect ? strings.perfectGame : combined ? strings.combinedNoHitter : strings.noHitter
        if jinxSafe { kind = moment.perfect ? strings.jinxPerfect : strings.jinxWord }
        let innings = moment.outs / 3
        let half = moment.battingSide == .away ? strings.top : strings.bottom
        let situation: String
        if moment.outsInInning >= 3 {
            situation = fill(strings.endOf, ["half": half, "inning": Words.ordinal(moment.inning)])
        } else {
            situation = fill(
                strings.outsIn[moment.outsInInning] ?? "", ["half": half, "inning": Words.ordinal(moment.inning)])
        }
        let score = fill(
            strings.score,
            [
                "away": game.away.abbreviation, "awayRuns": "\(moment.score.away)", "home": game.home.abbreviation,
                "homeRuns": "\(moment.score.home)",
            ])
        var values: [String: String] = [
            "pitcher": pitchers.last ?? pitching.nickname, "pitchers": pitchers.joined(separator: ", "),
            "kind": kind, "Kind": kind.prefix(1).uppercased() + kind.dropFirst(),
            "innings": "\(innings)", "ninthOuts": strings.ninthOuts[moment.outs - 24] ?? "\(moment.outs - 24) outs",
            "outsSoFar": "\(moment.outs)",
            "pitchingTeam": pitching.nickname, "battingTeam": batting.nickname, "score": score, "situation": situation,
            "newPitcher": pitchers.last ?? "", "noHit": jinxSafe ? strings.jinxNoHitVerb : strings.noHitVerb,
        ]
        if let batter = moment.batter { values["batter"] = game.name(of: batter) }
        if let event = moment.eventType { values["event"] = strings.events[event] ?? "\(event)" }
        if let reason = moment.reason { values["reason"] = strings.reasons[reason] ?? reason.rawValue }

        let (titleTemplate, bodyTemplate): (String, String)
        switch moment.kind {
        case .hitlessInnings: (titleTemplate, bodyTemplate) = (strings.titleProgress, strings.bodyProgress)
        case .ninthInningOut: (titleTemplate, bodyTemplate) = (strings.titleNinthOut, strings.bodyProgress)
        case .hitlessOut: (titleTemplate, bodyTemplate) = (strings.titleOut, strings.bodyOut)
        case .perfectGameLost: (titleTemplate, bodyTemplate) = (strings.titlePerfectLost, strings.bodyPerfectLost)
        case .pitchingChange: (titleTemplate, bodyTemplate) = (strings.titlePitchingChange, strings.bodyPitchingChange)
        case .brokenUp: (titleTemplate, bodyTemplate) = (strings.titleBrokenUp, strings.bodyBrokenUp)
        case .completed: (titleTemplate, bodyTemplate) = (strings.titleCompleted, strings.bodyCompleted)
        case .endedNotOfficial: (titleTemplate, bodyTemplate) = (strings.titleNotOfficial, strings.bodyNotOfficial)
        case .revived: (titleTemplate, bodyTemplate) = (strings.titleRevived, strings.bodyRevived)
        case .gameStart, .leadChange, .finalScore: return renderScore(moment, game: game, strings: strings)
        // A deal moment always carries its notice (`Moment.deal(...)`); this is never reached.
        case .deal: return AlertMessage(title: "Deal", body: "A deal was triggered.", bidKey: moment.bidKey)
        }
        var title = fill(titleTemplate, values)
        title = title.prefix(1).uppercased() + title.dropFirst()
        var body = fill(bodyTemplate, values)
        if moment.kind == .completed {
            if let play = moment.lastPlay { body += " " + fill(strings.lastOut, ["play": play]) }
            // What it means names the word: not for jinx-safe wording.
            if let meaning = moment.meaning, !jinxSafe { body += " " + meaning }
        }
        // A bid that cannot count says so, on every alert while it goes on (and has no chance).
        if moment.kind.bidStillAlive, let reason = moment.reason {
            body +=
                " "
                + fill(strings.cannotCount, ["kind": kind, "why": strings.cannotCountWhy[reason] ?? reason.rawValue])
        }
        // The chance names the word: not for jinx-safe wording.
        if moment.kind.bidStillAlive, let odds = moment.odds, !jinxSafe {
            if odds.basis != nil {
                body += " " + fill(strings.history, ["chance": odds.text, "base": odds.base])
            } else {
                // A moment stored before a bid had one figure.
                body += " History: \(odds.sentence)."
            }
        }
        if moment.kind.bidStillAlive, let listing = listing(game.broadcasts, strings: strings) {
            body += " " + listing
        }
        return AlertMessage(
            title: truncated(title, to: 200), body: truncated(body, to: maximumTextBytes),
            bidKey: moment.bidKey)
    }

    /// A score alert: the first pitch, a late lead, the final score, teams by their nicknames.
    static func renderScore(_ moment: Moment, game: GameInfo, strings: MessageStrings) -> AlertMessage {
        let score = moment.score
        let awayAhead = score.away >= score.home
        let (leader, trailer) =
            awayAhead ? (game.away.nickname, game.home.nickname) : (game.home.nickname, game.away.nickname)
        let half = moment.battingSide == .away ? strings.top : strings.bottom
        let situation =
            moment.outsInInning >= 3
            ? fill(strings.endOf, ["half": half, "inning": Words.ordinal(moment.inning)])
            : fill(strings.outsIn[moment.outsInInning] ?? "", ["half": half, "inning": Words.ordinal(moment.inning)])
        let values: [String: String] = [
            "away": game.away.nickname, "home": game.home.nickname, "leader": leader, "trailer": trailer,
            "leaderRuns": "\(max(score.away, score.home))", "trailerRuns": "\(min(score.away, score.home))",
            "winner": leader, "loser": trailer, "winnerRuns": "\(max(score.away, score.home))",
            "loserRuns": "\(min(score.away, score.home))", "situation": situation, "innings": "\(moment.inning)",
            "final": moment.inning == 9 ? "Final" : fill(strings.finalInnings, ["innings": "\(moment.inning)"]),
        ]
        let (titleTemplate, bodyTemplate): (String, String)
        switch moment.kind {
        case .gameStart: (titleTemplate, bodyTemplate) = (strings.titleGameStart, strings.bodyGameStart)
        case .leadChange: (titleTemplate, bodyTemplate) = (strings.titleLeadChange, strings.bodyLeadChange)
        default:
            let body =
                score.away == score.home
                ? strings.bodyFinalTie : moment.inning == 9 ? strings.bodyFinal : strings.bodyFinalInnings
            (titleTemplate, bodyTemplate) = (strings.titleFinal, body)
        }
        var body = fill(bodyTemplate, values)
        if moment.kind == .gameStart, let listing = listing(game.broadcasts, strings: strings) { body += " " + listing }
        return AlertMessage(
            title: truncated(fill(titleTemplate, values), to: 200), body: truncated(body, to: maximumTextBytes),
            bidKey: moment.bidKey)
    }

    /// A deal alert: "Papa John's (DC area): 50% off online orders" / "Nationals 9, Orioles 2 ...
    /// Redeem Wednesday, Aug 26, all day (America/New_York). Code: NATSWIN."
    static func renderDeal(_ deal: DealNotice, bidKey: String) -> AlertMessage {
        var body = "\(deal.why) Redeem \(deal.window)."
        if let code = deal.code { body += " Code: \(code)." }
        return AlertMessage(
            title: truncated("\(deal.sponsor): \(deal.reward)", to: 200), body: truncated(body, to: maximumTextBytes),
            bidKey: bidKey)
    }

    /// "Watch: NBC Sports Chicago, MLB.TV. Listen: WGN 720." National carriers first, each
    /// named once.
    package static func listing(_ broadcasts: [Broadcast], strings: MessageStrings) -> String? {
        func names(_ kinds: Set<Broadcast.Kind>) -> [String] {
            var seen: Set<String> = []
            return broadcasts.filter { kinds.contains($0.kind) }
                .sorted { ($0.isNational ? 0 : 1) < ($1.isNational ? 0 : 1) }
                .compactMap { broadcast in
                    let name = broadcast.callSign.map { "\($0) (\(broadcast.name))" } ?? broadcast.name
                    return seen.insert(broadcast.name).inserted ? name : nil
                }
        }
        let watch = names([.tv, .streaming])
        let listen = names([.radio])
        var parts: [String] = []
        if !watch.isEmpty { parts.append(fill(strings.watch, ["list": watch.joined(separator: ", ")])) }
        if !listen.isEmpty { parts.append(fill(strings.listen, ["list": listen.joined(separator: ", ")])) }
        return parts.isEmpty ? nil : parts.joined(separator: " ")
    }

    static func fill(_ template: String, _ values: [String: String]) -> String {
        var result = ""
        var rest = template[...]
        while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
            result += rest[..<open]
            let key = String(rest[rest.index(after: open)..<close])
            result += values[key] ?? "{\(key)}"
            rest = rest[rest.index(after: close)...]
        }
        return result + rest
    }

    /// Cuts `text` to at most `bytes` UTF-8 bytes on a character boundary, with an ellipsis.
    static func truncated(_ text: String, to bytes: Int) -> String {
        guard text.utf8.count > bytes else { return text }
        var result = ""
        for character in text {
            if result.utf8.count + character.utf8.count + 3 > bytes { break }
            result.append(character)
        }
        return result + "…"
    }
}
