import Clocks
import Delivery
import Foundation
import Testing

/// Push services come from whoever registers: their lean clients are bounded and released.
/// (Clients are made, never connected: nothing here touches the network.)
struct WebPushOriginsTests {
    @Test func atMostMaxClientsAndIdleOnesAreReleased() async throws {
        let clock = ManualWallClock(Date(timeIntervalSince1970: 1_600_000_000))
        let origins = WebPushOrigins(clock: clock, maxClients: 2, idleAfter: 120)
        #expect(origins.client(for: "https://a.push.test") != nil)
        #expect(origins.client(for: "https://b.push.test") != nil)
        // Full: this service goes over HTTP/1.1 this time, and is not remembered as HTTP/1.1.
        #expect(origins.client(for: "https://c.push.test") == nil)
        #expect(origins.openClients == 2)
        #expect(origins.http1Origins.isEmpty)

        clock.advance(by: 60)
        #expect(origins.client(for: "https://a.push.test") != nil)
        clock.advance(by: 61)
        // b has been unused for 121 s: released, and c takes its place; a (61 s) stays.
        #expect(origins.client(for: "https://c.push.test") != nil)
        #expect(origins.openClients == 2)
        #expect(origins.retiredClients == 1)
        await origins.closeRetired()
        #expect(origins.retiredClients == 0)

        // The same client while in use.
        let a = try #require(origins.client(for: "https://a.push.test"))
        #expect(origins.client(for: "https://a.push.test") === a)
        await origins.shutdown()
        #expect(origins.openClients == 0)
    }

    @Test func plainHTTPOriginsAreForgottenAtTheirRecheck() async throws {
        let clock = ManualWallClock(Date(timeIntervalSince1970: 1_600_000_000))
        let origins = WebPushOrigins(clock: clock, recheckAfter: 3600, maxClients: 2)
        #expect(origins.client(for: "http://plain.push.test") == nil)
        #expect(origins.http1Origins["http://plain.push.test"] == "not an https origin")
        clock.advance(by: 3600)
        #expect(origins.http1Origins.isEmpty)
        #expect(origins.openClients == 0)
        await origins.shutdown()
    }
}
