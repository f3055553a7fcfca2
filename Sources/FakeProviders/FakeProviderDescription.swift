/// What `nohit fake-apns` prints once listening and writes to `fake-apns.json` beside its CA and
/// key: where it is and what to sign with. `nohit replay --fake-apns DIR` and the benchmarks read it.
package struct FakeProviderDescription: Codable, Sendable, Hashable {
    package var url: String
    package var ca: String
    package var key: String
    package var keyID: String
    package var teamID: String

    package init(url: String, ca: String, key: String, keyID: String, teamID: String) {
        self.url = url
        self.ca = ca
        self.key = key
        self.keyID = keyID
        self.teamID = teamID
    }

    enum CodingKeys: String, CodingKey {
        case url, ca, key
        case keyID = "key_id"
        case teamID = "team_id"
    }
}
