extension GameState {
    /// Whether the rules end the game with the last play, without waiting for anyone to say so:
    /// once the scheduled innings are in (`scheduledInnings`, 9, or 7 in a 2020-2021 doubleheader
    /// game), the game ends when the team batting second leads after the other's half (its own
    /// half is not played), takes the lead in its own half (a walk-off), or trails when its half
    /// ends. A game called early (rain) or suspended is not seen here: its source says so.
    package func isOver(scheduledInnings: Int, homeBatsFirst: Bool = false) -> Bool {
        guard inning >= scheduledInnings else { return false }
        let second: Side = homeBatsFirst ? .away : .home
        let (lead, trail) = (score[second], score[second.opponent])
        if battingSide == second {
            return lead > trail || (outs >= 3 && trail > lead)
        }
        return outs >= 3 && lead > trail
    }
}
