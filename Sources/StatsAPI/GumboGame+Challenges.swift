import Baseball

/// A feed's pitch tracking and ABS challenges, read beside its plays.
extension GumboGame {
    /// The pitches pitch tracking placed (where it crossed the plate, in the batter's zone).
    static func marks(_ pitches: [PlayEvent]) -> [PitchMark] {
        pitches.enumerated().compactMap { number, pitch in
            guard let data = pitch.pitchData, let x = data.coordinates?.pX, let z = data.coordinates?.pZ,
                let top = data.strikeZoneTop, let bottom = data.strikeZoneBottom, x.isFinite, z.isFinite,
                top.isFinite, bottom.isFinite, top > bottom
            else { return nil }
            let code = pitch.details.call?.code ?? pitch.details.code ?? ""
            return PitchMark(
                number: number + 1, code: code,
                call: pitch.details.call?.description ?? pitch.details.description ?? code,
                type: pitch.details.type?.description, speed: data.startSpeed, x: x, z: z, top: top, bottom: bottom)
        }
    }

    // MARK: ABS challenges

    /// The feed's ABS counters and its challenged pitches: a pitch's own review (`reviewType`
    /// "MJ"), or a play's, which names the pitch marked reviewed (the last called pitch when none
    /// is). A review still under way is not counted yet.
    static func challenges(_ feed: GameFeed) -> ABSChallenges? {
        guard let block = feed.gameData.absChallenges, block.hasChallenges != false,
            block.away != nil || block.home != nil
        else { return nil }
        func counters(_ team: GameData.ABSChallengesBlock.TeamChallenges?) -> ABSChallenges.Counters {
            .init(remaining: team?.remaining ?? 0, won: team?.usedSuccessful ?? 0, lost: team?.usedFailed ?? 0)
        }
        let teams = feed.gameData.teams
        var list: [ABSChallenges.Challenge] = []
        for record in feed.liveData.plays.allPlays.sorted(by: { $0.about.atBatIndex < $1.about.atBatIndex }) {
            let pitches = record.playEvents.compactMap(\.value).sorted { $0.index < $1.index }.filter {
                $0.isPitch == true
            }
            var reviewed: [(Int, ReviewDetails)] = pitches.enumerated().compactMap { number, pitch in
                pitch.reviewDetails.flatMap { $0.isABS ? (number, $0) : nil }
            }
            if reviewed.isEmpty, let review = record.reviewDetails, review.isABS {
                let marked = pitches.lastIndex { $0.details.hasReview == true }
                let called = pitches.lastIndex { call(of: $0) != nil && $0.details.isInPlay != true }
                if let number = marked ?? called { reviewed = [(number, review)] }
            }
            let battingSide: Side = record.about.halfInning == "bottom" ? .home : .away
            for (number, review) in reviewed where review.inProgress != true {
                let pitch = pitches[number]
                guard let after = call(of: pitch), let batter = PlayerID(String(record.matchup.batter.id)),
                    let pitcher = PlayerID(String(record.matchup.pitcher.id))
                else { continue }
                let challengerID = review.player?.id
                let before = review.isOverturned == true ? after.opposite : after
                // The team the feed names; else the challenger's; else the side the umpire's call
                // went against (a called strike: the batter's; a ball: the fielders').
                let side: Side =
                    review.challengeTeamId == teams.home.id
                    ? .home
                    : review.challengeTeamId == teams.away.id
                        ? .away
                        : challengerID.map { $0 == record.matchup.batter.id ? battingSide : battingSide.opponent }
                            ?? (before == .strike ? battingSide : battingSide.opponent)
                let role: ABSChallenges.Role =
                    side == battingSide
                    ? .batter : (challengerID == record.matchup.pitcher.id ? .pitcher : .catcher)
                let challenger = challengerID.flatMap { PlayerID(String($0)) } ?? (role == .batter ? batter : .none)
                let count = pitch.count ?? record.count
                list.append(
                    .init(
                        inning: record.about.inning, battingSide: battingSide,
                        plateAppearance: record.about.atBatIndex, pitchNumber: number + 1, batter: batter,
                        pitcher: pitcher, challenger: challenger, side: side, role: role,
                        callBefore: before, callAfter: after,
                        balls: count.balls, strikes: count.strikes))
            }
        }
        return ABSChallenges(
            counters: PerSide(away: counters(block.away), home: counters(block.home)), challenges: list)
    }

    /// A called pitch's call as it stands: a ball or a called strike; nil for a swing or a pitch in
    /// play.
    static func call(of pitch: PlayEvent) -> ABSChallenges.Call? {
        switch pitch.details.call?.code ?? pitch.details.code {
        case "B", "*B", "P", "V": .ball
        case "C": .strike
        default: nil
        }
    }
}
