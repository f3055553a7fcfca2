import Alerts
import Baseball
import Delivery
import Foundation
import Hummingbird
import Scores

/// `GET /api/games/{id}/live-activity-channel`: the broadcast channel (iOS 18) an app starts a
/// bid's Live Activity on (the side pitching: `?side=`, needed only when both sides hold one) (`Activity.request(…, pushType: .channel(id))`), for its bundle id,
/// environment and spoiler delay (rounded up as every `?delay=` is). The service makes one when
/// the game first holds a bid worth following to a device of the app; until then, and where the
/// service has no APNs key, there is none to give, and the answer says so.
struct ChannelRoutes: Sendable {
    /// The channel kept for a key, when the service keeps channels.
    let channel: (@Sendable (BroadcastChannelPlan.Key) async throws -> String?)?
    let board: LiveBoard

    /// What the app is told.
    struct Answer: Encodable {
        var channelID: String
        var gameID: String
        /// The side pitching: the bid the channel follows.
        var side: String
        var topic: String
        var environment: String
        var delay: Int
    }

    func add(to api: RouterGroup<APIRequestContext>) {
        api.get("games/:id/live-activity-channel") { request, context in
            let id = GameRoutes.gameID(try context.parameters.require("id"), in: board.all)
            let query = request.uri.queryParameters
            guard let topic = query.get("topic"), !topic.isEmpty else {
                throw API.error(.badRequest, "topic is required: the app's bundle id")
            }
            let checkedTopic: String
            do {
                checkedTopic = try Registrar.validated(topic: topic)
            } catch {
                throw API.error(.badRequest, "\(error)")
            }
            let name = query.get("environment") ?? APNsEnvironment.byDefault.rawValue
            guard let environment = APNsEnvironment(name: name) else {
                throw API.error(.badRequest, "environment must be \(APNsEnvironment.accepted), not '\(name)'")
            }
            let delay = try API.delay(request)
            let sides: [Side]
            switch query.get("side") {
            case nil: sides = [.away, .home]
            case "away": sides = [.away]
            case "home": sides = [.home]
            case let other?:
                throw API.error(.badRequest, "side must be home or away (the side pitching), not '\(other)'")
            }
            guard let channel else {
                throw API.error(
                    .notFound, "this service keeps no broadcast channels: it has no APNs key (see docs/operating.md)")
            }
            var found: [(BroadcastChannelPlan.Key, String)] = []
            for side in sides {
                let key = BroadcastChannelPlan.Key(
                    bid: BroadcastChannelPlan.Key.bid(gameID: id, side: side), topic: checkedTopic,
                    environment: environment, delay: delay)
                if let channelID = try await channel(key) { found.append((key, channelID)) }
            }
            guard found.count < 2 else {
                throw API.error(
                    .badRequest,
                    "both sides of \(id) hold a bid with a channel: give side (home or away, the side pitching)")
            }
            guard let (key, channelID) = found.first else {
                throw API.error(
                    .notFound,
                    "no broadcast channel for \(id) (\(checkedTopic), \(environment.rawValue), \(delay) s behind) yet: one "
                        + "is made when the game first holds a bid worth following to a device of the app; until then, "
                        + "start the activity with its own push token")
            }
            return try API.json(
                Answer(
                    channelID: channelID, gameID: id, side: key.bid.hasSuffix("-away") ? "away" : "home",
                    topic: checkedTopic, environment: environment.rawValue, delay: delay))
        }
    }
}
