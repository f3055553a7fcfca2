import Foundation

/// What a device has already been sent about one bid. (Whether it already has this very moment
/// is not asked: a moment is planned once, for every device, in the transaction that stores it.)
package struct DeviceBidHistory: Sendable, Hashable {
    /// An in-progress alert (an inning, an out in the 9th, a revival) has been planned.
    package var progressSent = false

    package init(progressSent: Bool = false) {
        self.progressSent = progressSent
    }
}

/// Whether and when a device gets a moment.
package enum PlanDecision: Sendable, Hashable {
    /// Send, not before this time (the moment's time plus the spoiler delay, or the end of quiet
    /// hours for a completed no-hitter).
    case send(notBefore: Date)
    case skip(SkipReason)
}

package enum SkipReason: String, Sendable, Hashable, Codable {
    case deviceDisabled = "device disabled"
    case kindNotWanted = "kind not wanted"
    case belowThreshold = "below the device's threshold"
    case frequency = "frequency"
    case notFollowingBid = "device was not told about this bid"
    case quietHours = "quiet hours"
    case notFavourite = "not a favourite team's game"
    case notSubscribed = "not subscribed to the deal"
    case cannotCount = "the bid cannot count as an official no-hitter"
}

/// Decides, for one moment and one device, whether to send and when. Pure, and table-tested.
package enum Planner {
    /// `pitchingTeam`: the abbreviation of the side pitching in the moment's game, which a Live
    /// Activity's bid names (``ActivityBid``); without it, such an activity hears its bid only if
    /// it was registered with the franchise's code (`teams`).
    package static func decide(
        _ moment: Moment, teams: [String], at momentTime: Date, device: Device, history: DeviceBidHistory,
        pitchingTeam: String? = nil
    ) -> PlanDecision {
        guard device.isActive else { return .skip(.deviceDisabled) }
        if case .liveActivityStart(_, let environment, let topic, _) = device.channel {
            return decideStart(
                moment, teams: teams, at: momentTime, device: device, history: history, app: (topic, environment))
        }
        if moment.kind.isScore { return decideScore(moment, teams: teams, at: momentTime, device: device) }
        if moment.kind == .deal { return decideDeal(moment, at: momentTime, device: device) }
        let preferences = device.preferences
        // A bid that cannot count, for a device that wants only those that can.
        if !preferences.unofficialBids, moment.reason == .sevenInningDoubleheader { return .skip(.cannotCount) }
        // A broadcast channel was made for a bid worth following: every change of it, at its delay
        // (``BroadcastChannelPlan``); nothing while it is being made (its id not yet APNs's).
        if case .liveActivityChannel(let id, let bid, _, _) = device.channel {
            guard bid == moment.bidKey, !BroadcastChannelPlan.isIntent(id) else { return .skip(.notFollowingBid) }
            return .send(notBefore: momentTime.addingTimeInterval(TimeInterval(preferences.spoilerDelaySeconds)))
        }
        // An activity that names its bid shows that bid: it hears every change of it, as a channel
        // does, and nothing of another bid (whose state would replace its own).
        if case .liveActivity(_, _, _, let bid?) = device.channel {
            let franchise = teams.count == 2 ? teams[moment.pitchingSide == .away ? 0 : 1] : nil
            guard bid.shows(moment, pitchingTeam: pitchingTeam, franchise: franchise) else {
                return .skip(.notFollowingBid)
            }
            return .send(notBefore: momentTime.addingTimeInterval(TimeInterval(preferences.spoilerDelaySeconds)))
        }
        let past = preferences.isPastThreshold(moment, teams: teams)
        let notBefore = momentTime.addingTimeInterval(TimeInterval(preferences.spoilerDelaySeconds))

        // A Live Activity that names no bid shows the state of every bid past the threshold: no
        // frequency, no quiet hours (it updates silently).
        // An out's odds moment starts a bid for a device that chose odds, at the first out past its
        // share; the inning moments carry it on from there.
        let oddsStart = moment.kind == .hitlessOut && preferences.minOdds != nil && moment.odds != nil
        if device.channel.updatesLiveActivities {
            if moment.kind == .hitlessOut {
                return oddsStart && past && !history.progressSent ? .send(notBefore: notBefore) : .skip(.frequency)
            }
            // An ending carries no odds: with odds chosen, only an activity that started hears it.
            if preferences.minOdds != nil && moment.odds == nil && !moment.kind.bidStillAlive {
                return history.progressSent ? .send(notBefore: notBefore) : .skip(.notFollowingBid)
            }
            return past || history.progressSent ? .send(notBefore: notBefore) : .skip(.belowThreshold)
        }

        let kind = moment.kind == .hitlessOut ? .hitlessInnings : moment.kind
        guard preferences.kinds.contains(kind) else { return .skip(.kindNotWanted) }
        switch moment.kind {
        case .hitlessInnings:
            guard past else { return .skip(.belowThreshold) }
            if preferences.frequency == .oncePerBid && history.progressSent { return .skip(.frequency) }
        case .hitlessOut:
            guard oddsStart, !history.progressSent else { return .skip(.frequency) }
            guard past else { return .skip(.belowThreshold) }
        case .ninthInningOut:
            guard past else { return .skip(.belowThreshold) }
            // The 25th or 26th out may be where the odds first pass a device's share (past 50 %).
            let startsOdds = preferences.minOdds != nil && moment.odds != nil && !history.progressSent
            guard preferences.frequency == .everyOutInNinth || startsOdds else { return .skip(.frequency) }
        case .revived:
            guard history.progressSent || past else { return .skip(.belowThreshold) }
        case .perfectGameLost, .pitchingChange:
            guard history.progressSent else { return .skip(.notFollowingBid) }
            if preferences.frequency == .oncePerBid { return .skip(.frequency) }
        case .brokenUp, .endedNotOfficial:
            guard history.progressSent else { return .skip(.notFollowingBid) }
        case .completed:
            guard history.progressSent || moment.outs >= preferences.thresholdOuts(teams: teams) else {
                return .skip(.notFollowingBid)
            }
        case .gameStart, .leadChange, .finalScore:
            return decideScore(moment, teams: teams, at: momentTime, device: device)
        case .deal:
            return decideDeal(moment, at: momentTime, device: device)
        }

        if let quiet = preferences.quietHours, let end = quiet.end(after: notBefore) {
            // The game is over: tell them in the morning. Anything in progress is stale by then.
            return moment.kind == .completed ? .send(notBefore: max(end, notBefore)) : .skip(.quietHours)
        }
        return .send(notBefore: notBefore)
    }
}

extension Planner {
    /// A push-to-start token: the bid's Live Activity is started once, at the moment that would
    /// first update the app's Live Activity (past the device's threshold, or its odds), and only by
    /// a moment that makes the device a follower of the bid (so it is never started twice). What
    /// follows reaches the activity by its channel or its own token, not by this one.
    static func decideStart(
        _ moment: Moment, teams: [String], at momentTime: Date, device: Device, history: DeviceBidHistory,
        app: (topic: String, environment: APNsEnvironment)
    ) -> PlanDecision {
        guard moment.kind.isBid else { return .skip(.kindNotWanted) }
        guard moment.kind.bidStillAlive, moment.kind.isProgress else { return .skip(.notFollowingBid) }
        guard !history.progressSent else { return .skip(.frequency) }
        var asked = device
        asked.channel = .liveActivity(token: "", environment: app.environment, topic: app.topic)
        return decide(moment, teams: teams, at: momentTime, device: asked, history: history)
    }

    /// A score alert: for a favourite team's game, when the device wants that kind; a Live
    /// Activity (a bid's) gets none. Quiet hours hold a final score until they end and drop the
    /// rest; the spoiler delay holds every one.
    static func decideScore(_ moment: Moment, teams: [String], at momentTime: Date, device: Device) -> PlanDecision {
        let preferences = device.preferences
        guard !device.channel.updatesLiveActivities, device.channel.kind != .liveActivityStart,
            preferences.scoreAlerts.wants(moment.kind)
        else {
            return .skip(.kindNotWanted)
        }
        guard preferences.isFavourite(teams) else { return .skip(.notFavourite) }
        let notBefore = momentTime.addingTimeInterval(TimeInterval(preferences.spoilerDelaySeconds))
        if let quiet = preferences.quietHours, let end = quiet.end(after: notBefore) {
            return moment.kind == .finalScore ? .send(notBefore: max(end, notBefore)) : .skip(.quietHours)
        }
        return .send(notBefore: notBefore)
    }
}

extension Planner {
    /// A deal alert: for a device subscribed to the rule (a Live Activity gets none). The
    /// spoiler delay holds it; quiet hours hold it until they end (the deal is still good).
    static func decideDeal(_ moment: Moment, at momentTime: Date, device: Device) -> PlanDecision {
        let preferences = device.preferences
        guard !device.channel.updatesLiveActivities, device.channel.kind != .liveActivityStart else {
            return .skip(.kindNotWanted)
        }
        guard let rule = moment.deal?.ruleID, preferences.deals.contains(rule) else { return .skip(.notSubscribed) }
        let notBefore = momentTime.addingTimeInterval(TimeInterval(preferences.spoilerDelaySeconds))
        if let quiet = preferences.quietHours, let end = quiet.end(after: notBefore) {
            return .send(notBefore: max(end, notBefore))
        }
        return .send(notBefore: notBefore)
    }
}

extension Moment.Kind {
    /// Kinds that tell a device a bid is on (they make later follow-ups relevant).
    package var isProgress: Bool {
        self == .hitlessInnings || self == .ninthInningOut || self == .hitlessOut || self == .revived
    }
}
