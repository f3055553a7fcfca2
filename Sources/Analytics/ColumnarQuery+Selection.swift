import Foundation

extension ColumnarQuery {
    /// The `p`th percentile as ``QueryEngine/percentile(_:_:)`` gives it (linear between the
    /// closest ranks), found by selection instead of a sort; `values` is reordered.
    public static func percentileBySelection(_ values: inout [Double], _ p: Double) -> Double? {
        guard !values.isEmpty else { return nil }
        let rank = p / 100 * Double(values.count - 1)
        let lower = Int(rank.rounded(.down))
        let upper = min(lower + 1, values.count - 1)
        select(&values, lower)
        let a = values[lower]
        let b = upper == lower ? a : values[(lower + 1)...].min()!
        return a + (b - a) * (rank - Double(lower))
    }

    /// Puts the `k`th smallest value at `k`, the smaller before it and the larger after it.
    static func select(_ values: inout [Double], _ k: Int) {
        var low = 0
        var high = values.count - 1
        while high > low {
            let middle = low + (high - low) / 2
            // The median of three as the pivot.
            if values[middle] < values[low] { values.swapAt(middle, low) }
            if values[high] < values[low] { values.swapAt(high, low) }
            if values[high] < values[middle] { values.swapAt(high, middle) }
            let pivot = values[middle]
            var i = low
            var j = high
            while i <= j {
                while values[i] < pivot { i += 1 }
                while values[j] > pivot { j -= 1 }
                if i <= j {
                    values.swapAt(i, j)
                    i += 1
                    j -= 1
                }
            }
            if k <= j {
                high = j
            } else if k >= i {
                low = i
            } else {
                return
            }
        }
    }
}
