import Foundation

/// How many Live Activities the service starts by push on one device, and how often: Apple gives
/// push-to-start a small budget per device (about ten starts in a short window, then the device
/// refuses; the exact budget is not documented), so the service keeps under its own, at most
/// `starts` in any `window`. A start past it waits for the first time the budget allows (and is
/// dropped, with the reason, if the bid is over by then). Pure.
package struct StartBudget: Sendable, Hashable {
    package var starts: Int
    package var window: TimeInterval

    package init(starts: Int = 8, window: TimeInterval = 3600) {
        self.starts = starts
        self.window = window
    }

    /// The earliest time at or after `wanted` at which one more start keeps every window of the
    /// device's starts within budget, given those already `planned` (sent or to be sent, any
    /// time). Conservative: no more than `starts - 1` others may lie within `window` either side.
    package func slot(wanted: Date, planned: [Date]) -> Date {
        guard starts > 0 else { return .distantFuture }
        let sorted = planned.sorted()
        var time = wanted
        while true {
            let near = sorted.filter { abs($0.timeIntervalSince(time)) < window }
            guard near.count >= starts else { return time }
            // Past the window of the earliest start near it: each step moves on, so this ends.
            time = near[0].addingTimeInterval(window)
        }
    }
}
