/// The keys each request body takes, for the strict reader: snake_case only; any other key is
/// refused by name and path before the body is decoded.
extension StrictJSON.Keys {
    /// `PUT /api/devices/{id}/preferences`, and `preferences` inside a registration.
    package static let preferences = StrictJSON.Keys.object([
        "threshold_innings": .value, "favourite_teams": .value, "favourite_threshold_innings": .value,
        "frequency": .value, "kinds": .value, "spoiler_delay_seconds": .value, "jinx_safe": .value,
        "unofficial_bids": .value,
        "quiet_hours": .nullable(.object(["start": .value, "end": .value, "time_zone": .value])),
        "score_alerts": .object(["final_score": .value, "game_start": .value, "lead_change": .value]),
        "team_names": .object(["team": .value, "name": .value]), "deals": .value, "min_odds": .nullable(.value),
    ])

    /// `POST /api/devices`.
    package static let deviceRegistration = StrictJSON.Keys.object([
        "channel": .value, "token": .value, "environment": .value, "topic": .value, "app": .value, "endpoint": .value,
        "p256dh": .value, "auth": .value, "url": .value, "secret": .value, "updates": .value, "game_id": .value,
        "pitching_team": .value, "preferences": preferences,
    ])
}
