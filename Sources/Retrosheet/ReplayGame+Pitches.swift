import Baseball
import Foundation

extension ReplayGame {
    /// A pitch of a replayed game between its updates: the plate appearance as it stands after it.
    package struct TimedPitch: Sendable {
        package var time: Date
        /// The update it comes before (a pitch before a play), or after (`afterPlay`: a play within
        /// the plate appearance, a steal or a wild pitch, and the count after every pitch so far).
        package var update: Int
        package var afterPlay: Bool
        package var atBat: AtBat
        /// Its code in the record's pitch sequence (`B`, `C`, `F`, `X` ...).
        package var code: UInt8
    }

    /// Every pitch of the game the records show between plays, each at its time: the pitches of a
    /// plate appearance before its play spread evenly between the update before and the play (the
    /// last, on which the play is made, is the play itself); after a play that does not end the
    /// plate appearance, the count after every pitch so far. What a replay says as the count
    /// moving, and what the fake Stats API shows of the plate appearance in progress.
    package func timedPitches() -> [TimedPitch] {
        var timed: [TimedPitch] = []
        var previous: (time: Date, sequence: [UInt8], half: (Int, Side)?) = (start, [], nil)
        for (order, entry) in updates.enumerated() {
            guard case .play(let record) = entry.update, order < pitchSequences.count else {
                previous.time = entry.time
                continue
            }
            let sequence = pitchSequences[order]
            let half = (record.inning, record.battingSide)
            // A plate appearance written over several records repeats its earlier pitches: only
            // those after them are new.
            let continues = previous.half.map { $0 == half } == true && sequence.starts(with: previous.sequence)
            let all = PitchSequence.pitches(sequence)
            let before = continues ? PitchSequence.pitches(previous.sequence).count : 0
            let new = all.dropFirst(before)
            // Each new pitch but the last (the play is made on it, or after it).
            let shown = Array(new.dropLast())
            let span = entry.time.timeIntervalSince(previous.time)
            for (number, pitch) in shown.enumerated() {
                timed.append(
                    TimedPitch(
                        time: previous.time.addingTimeInterval(span * Double(number + 1) / Double(shown.count + 1)),
                        update: order, afterPlay: false,
                        atBat: AtBat(
                            batter: record.batter, balls: pitch.balls, strikes: pitch.strikes,
                            lastPitch: PitchSequence.words(pitch.code), pitches: before + number + 1,
                            afterUpdates: order),
                        code: pitch.code))
            }
            let ends = record.play?.eventType.endsPlateAppearance ?? false
            if !ends, record.play != nil, let last = all.last {
                timed.append(
                    TimedPitch(
                        time: entry.time, update: order, afterPlay: true,
                        atBat: AtBat(
                            batter: record.batter, balls: last.balls, strikes: last.strikes,
                            lastPitch: PitchSequence.words(last.code), pitches: all.count, afterUpdates: order + 1),
                        code: last.code))
            }
            previous = (entry.time, ends ? [] : sequence, half)
        }
        return timed
    }
}
