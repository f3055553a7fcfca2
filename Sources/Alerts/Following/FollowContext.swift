import Baseball

/// What a follower finishes its moments with, besides the game itself: the odds of history (each
/// moment of a bid still alive carries its chance) and what each side's no-hitter would mean from
/// the seasons held, looked up ahead of its end (the completed moment carries it). Given with each
/// item (``GameFollower/follow(_:context:)``), so a moment is whole where it is made.
package struct FollowContext: Sendable {
    package var odds: BidOdds?
    /// What a no-hitter by each pitching side would mean ("The White Sox's first no-hitter since
    /// …"), when it has been looked up.
    package var meanings: PerSide<String?>
    /// Whether every out of a notable bid is a moment (`hitless-out`), not only each inning and the
    /// 25th and 26th outs: where the odds of history are known (devices may choose to hear of a
    /// bid when its chance passes a share).
    package var everyOut: Bool

    /// `everyOut` defaults to whether the odds are known.
    package init(odds: BidOdds? = nil, meanings: PerSide<String?> = PerSide(repeating: nil), everyOut: Bool? = nil) {
        self.odds = odds
        self.meanings = meanings
        self.everyOut = everyOut ?? (odds != nil)
    }
}
