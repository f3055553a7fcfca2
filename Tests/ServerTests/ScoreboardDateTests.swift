import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

/// `GET /api/scoreboard?date=` takes days the calendar has, and says what is wrong with others.
@Suite struct ScoreboardDateTests {
    @Test func onlyDaysOfTheCalendarAreAsked() async throws {
        let fixture = try await APIServerTests.Fixture { _ in true }
        defer { fixture.remove() }
        try await fixture.test { client in
            for (date, status) in [
                ("2020-08-25", HTTPResponse.Status.ok), ("2020-02-29", .ok), ("2020-13-45", .badRequest),
                ("2021-02-29", .badRequest), ("2020-04-31", .badRequest), ("2020-00-10", .badRequest),
                ("20200825", .badRequest), ("2020-8-25", .badRequest),
            ] {
                try await client.execute(uri: "/api/scoreboard?date=\(date)", method: .get) { response in
                    #expect(response.status == status, "\(date)")
                    if status == .badRequest {
                        #expect(String(buffer: response.body).contains(date), "\(date)")
                    }
                }
            }
        }
    }
}
