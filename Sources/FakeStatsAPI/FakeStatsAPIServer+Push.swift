import Foundation
import Hummingbird
import HummingbirdWebSocket
import Retrosheet
import Synchronization

extension FakeStatsAPIServer {
    /// The Gameday push as MLB serves it (`/api/v1/game/push/subscribe/gameday/{pk}`): a message
    /// each time the game's feed moves (`timeStamp` its new timecode), and `Gameday5` every
    /// `heartbeat` of real time; with the push faults (drop, delay, duplicate, disconnect, silence).
    package func pushRouter(heartbeat: Duration = .seconds(10)) -> Router<BasicWebSocketRequestContext> {
        let router = Router(context: BasicWebSocketRequestContext.self)
        router.ws("api/v1/game/push/subscribe/gameday/:pk") { [self] _, context in
            guard let pk = context.parameters.get("pk", as: Int.self), game(pk: pk) != nil else { return .dontUpgrade }
            return .upgrade([:])
        } onUpgrade: { [self] inbound, outbound, context in
            guard let pk = context.requestContext.parameters.get("pk", as: Int.self), let game = game(pk: pk) else {
                return
            }
            // From the clock as the socket opens (counted after: a test that sees the count may
            // move the clock on).
            let start = clock.now()
            requests.withLock { $0["push", default: 0] += 1 }
            try await withThrowingTaskGroup(of: Void.self) { group in
                // The client's end (or anything it sends, read and dropped) ends the socket.
                group.addTask {
                    for try await _ in inbound.messages(maxSize: 1 << 16) {}
                }
                let silent = Silence()
                group.addTask {
                    while true {
                        try await Task.sleep(for: heartbeat)
                        if silent.isOn { continue }
                        try await outbound.write(.text("Gameday5"))
                    }
                }
                group.addTask { [self] in
                    try await push(game, pk: pk, from: start, silent: silent) { text in
                        try await outbound.write(.text(text))
                    }
                    // Over: the socket stays until the client leaves.
                    try await Task.sleep(for: .seconds(86_400))
                }
                try await group.next()
                group.cancelAll()
            }
        }
        return router
    }

    /// Whether a socket has gone silent (a `push-silence` fault).
    final class Silence: Sendable {
        private let on = Mutex(false)
        var isOn: Bool { on.withLock { $0 } }
        func set() { on.withLock { $0 = true } }
    }

    /// The times the game's feed moves, in order: each update's, each pitch's, and a re-scoring's.
    package func pushTimes(_ game: ReplayGame, pk: Int) -> [Date] {
        // Each update, and each pitch between them (the plate appearance under way moves too).
        var times = game.updates.map { $0.time } + game.timedPitches().filter { !$0.afterPlay }.map(\.time)
        if let rescored = rescoredAt.withLock({ $0[pk] }) { times.append(rescored) }
        return Array(Set(times)).sorted()
    }

    /// Sends a message at each move of the feed after `start`, on the game clock, until the game is
    /// over; returns then (or throws when the socket is closed by a fault).
    func push(
        _ game: ReplayGame, pk: Int, from start: Date, silent: Silence,
        send: @escaping @Sendable (String) async throws -> Void
    ) async throws {
        var sent = start
        // A delayed message is sent beside the next ones, in this group: the game over, the group
        // waits for it; the socket closed, it is dropped with the rest.
        try await withThrowingDiscardingTaskGroup { delayed in
            while true {
                guard let next = pushTimes(game, pk: pk).first(where: { $0 > sent }) else { return }
                try await clock.sleep(until: next)
                // Everything up to now is in the feed: one message for it all, as the feed's timecode.
                let now = clock.now()
                let moved = pushTimes(game, pk: pk).last { $0 <= now } ?? next
                sent = moved
                let message = Self.pushMessage(pk: pk, timeStamp: GumboWriter.timeStamp(moved), wait: wait)
                guard !silent.isOn else { continue }
                switch takeFault(game: pk, kinds: FaultKind.push) {
                case let fault? where fault.kind == .pushDrop:
                    continue
                case let fault? where fault.kind == .pushDuplicate:
                    try await send(message)
                    try await send(message)
                case let fault? where fault.kind == .pushDelay:
                    let late = now.addingTimeInterval(fault.seconds ?? 5)
                    delayed.addTask { [clock] in
                        try await clock.sleep(until: late)
                        try await send(message)
                    }
                case let fault? where fault.kind == .pushDisconnect:
                    throw PushClosed()
                case let fault? where fault.kind == .pushSilence:
                    silent.set()
                    continue
                default:
                    try await send(message)
                }
                requests.withLock { $0["push message", default: 0] += 1 }
            }
        }
    }

    struct PushClosed: Error {}

    /// A message as Gameday's (`../shared/data/statsapi/gameday-push-message.json`).
    static func pushMessage(pk: Int, timeStamp: String, wait: Int) -> String {
        #"{"timeStamp":"\#(timeStamp)","gamePk":"\#(pk)","updateId":"\#(UUID().uuidString.lowercased())","wait":\#(wait),"#
            + #""logicalEvents":[],"gameEvents":[],"changeEvent":{"type":"new_entry"},"isDelay":false}"#
    }
}
