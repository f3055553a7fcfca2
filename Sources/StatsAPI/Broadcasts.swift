import Baseball

extension ScheduleGame {
    /// Where to watch or listen, from the schedule's `broadcasts(all)` hydrate: television, radio
    /// (AM and FM) and streaming. National carriers come once per team side; each is kept once.
    package var carriage: [Broadcast] {
        var seen = Set<String>()
        var result: [Broadcast] = []
        for broadcast in broadcasts ?? [] {
            let type = (broadcast.type ?? "").uppercased()
            let kind: Broadcast.Kind
            switch type {
            case "TV": kind = .tv
            case "AM", "FM", "RADIO": kind = .radio
            case "STREAMING", "OTT", "WEB": kind = .streaming
            default:
                guard broadcast.availableForStreaming == true else { continue }
                kind = .streaming
            }
            let national =
                broadcast.isNational == true || broadcast.availability?.availabilityCode?.lowercased() == "national"
            let side: Side? =
                national ? nil : (broadcast.homeAway == "home" ? .home : broadcast.homeAway == "away" ? .away : nil)
            let key = national ? "\(kind)-\(broadcast.name)" : "\(kind)-\(broadcast.name)-\(broadcast.homeAway ?? "")"
            guard seen.insert(key).inserted else { continue }
            result.append(
                Broadcast(
                    kind: kind, name: broadcast.name, callSign: broadcast.callSign, isNational: national, side: side))
        }
        // National first, then the home team's, then the visitors'.
        return result.enumerated().sorted { a, b in
            func rank(_ broadcast: Broadcast) -> Int {
                broadcast.isNational ? 0 : broadcast.side == .home ? 1 : 2
            }
            return (rank(a.element), a.offset) < (rank(b.element), b.offset)
        }.map(\.element)
    }
}
