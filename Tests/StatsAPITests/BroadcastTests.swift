import Alerts
import Foundation
import Testing

@testable import StatsAPI

/// Broadcasts as the schedule's `broadcasts(all)` hydrate gives them (PROTOCOLS.md): national
/// carriers listed for both teams come once; radio is AM and FM.
@Suite struct BroadcastTests {
    @Test func nationalPairsComeOnceAndEachKindIsKept() throws {
        let json = #"""
            {"gamePk": 1, "gameDate": "2024-07-13T01:40:00Z", "status": {"codedGameState": "S"},
             "teams": {"away": {"team": {"id": 141}}, "home": {"team": {"id": 109}}},
             "broadcasts": [
              {"id": 1, "name": "ESPN", "type": "TV", "homeAway": "away", "isNational": true,
               "availability": {"availabilityCode": "national"}},
              {"id": 1, "name": "ESPN", "type": "TV", "homeAway": "home", "isNational": true,
               "availability": {"availabilityCode": "national"}},
              {"id": 2, "name": "Sportsnet", "type": "TV", "homeAway": "away", "isNational": false},
              {"id": 3, "name": "D-backs.TV", "type": "TV", "homeAway": "home", "isNational": false},
              {"id": 4, "name": "KTAR", "type": "FM", "callSign": "KTAR", "homeAway": "home", "isNational": false},
              {"id": 5, "name": "Sportsnet 590", "type": "AM", "callSign": "CJCL", "homeAway": "away"},
              {"id": 6, "name": "MLB.TV", "type": "Streaming", "homeAway": "home", "availableForStreaming": true},
              {"id": 7, "name": "Something new", "type": "Hologram", "homeAway": "home"}
             ]}
            """#
        let game = try JSONDecoder().decode(ScheduleGame.self, from: Data(json.utf8))
        let carriage = game.carriage
        #expect(carriage.map(\.name) == ["ESPN", "D-backs.TV", "KTAR", "MLB.TV", "Sportsnet", "Sportsnet 590"])
        #expect(carriage.first?.isNational == true && carriage.first?.side == nil)
        #expect(carriage.first { $0.name == "KTAR" }?.kind == .radio)
        #expect(carriage.first { $0.name == "KTAR" }?.callSign == "KTAR")
        #expect(carriage.first { $0.name == "MLB.TV" }?.kind == .streaming)
        #expect(carriage.first { $0.name == "Sportsnet" }?.side == .away)
    }
}
