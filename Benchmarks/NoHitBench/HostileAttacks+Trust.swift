import Foundation
import NIOCore
import NIOPosix

/// The attacks of issue 57, item 4: what a hostile client still found at 604777f, each from its
/// own addresses, beside every earlier one.
extension Attacks {
    static let trustDescriptions = [
        "trickled declarations (127.0.0.22): 2 connections declaring 8 MB Keen bodies with the public write key, "
            + "a byte every 10 s, reopened when closed",
        "slow bodies (127.0.4.1-127.0.4.50): 2,000 Keen POSTs, a byte every 15 s, reopened when closed",
        "resuming SSE (127.0.5.1-127.0.5.20): 2,000 streams from ?after=0, a 4 KB receive buffer, never read",
        "property squatting (127.0.0.23): 2 loops posting batches of 100 events, each with 20 new property names, "
            + "through the public write key",
        "standings flood (127.0.0.24): 64 loops of GET /api/standings",
    ]

    static let trustNames = ["trickle", "slow-bodies", "resume", "squat", "standings"]

    func runTrust(_ on: @escaping @Sendable (String) -> Bool) async {
        await withTaskGroup(of: Void.self) { group in
            if on("trickle") {
                group.addTask {
                    await self.trickle(
                        "trickled declarations", from: ["127.0.0.22"], count: 2, declared: 8_000_000,
                        every: .seconds(10))
                }
            }
            if on("slow-bodies") {
                group.addTask {
                    await self.trickle(
                        "slow bodies", from: (1...50).map { "127.0.4.\($0)" }, count: 2_000, declared: 2_000,
                        every: .seconds(15))
                }
            }
            for index in 0..<20 where on("resume") {
                group.addTask {
                    await self.hold(
                        "resuming SSE", from: "127.0.5.\(index + 1)", count: 100,
                        request: "GET /api/stream?after=0 HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n",
                        receiveBuffer: 4096)
                }
            }
            for index in 0..<2 where on("squat") { group.addTask { await self.squat(index) } }
            for _ in 0..<64 where on("standings") { group.addTask { await self.standings() } }
        }
    }

    /// `count` Keen POSTs spread over `sources`, each declaring `declared` bytes and sending one
    /// byte every `every`; a closed one is opened again (at most 10 a second per address).
    private func trickle(_ attack: String, from sources: [String], count: Int, declared: Int, every: TimeAmount) async {
        let head =
            "POST /3.0/projects/\(webProject)/events HTTP/1.1\r\nHost: x\r\nAuthorization: \(webWriteKey)\r\n"
            + "Content-Type: application/json\r\nContent-Length: \(declared)\r\n\r\n{"
        await withTaskGroup(of: Void.self) { group in
            for (index, source) in sources.enumerated() {
                let share = count / sources.count + (index < count % sources.count ? 1 : 0)
                group.addTask {
                    var open: [any Channel] = []
                    let closed = Counter()
                    while !self.stopped {
                        open.removeAll { !$0.isActive }
                        let wanted = min(share - open.count, open.isEmpty ? share : 10)
                        for _ in 0..<max(0, wanted) where !self.stopped {
                            if let channel = await self.open(
                                from: source, request: head, receiveBuffer: nil,
                                onClose: { [self] in
                                    closed.add(1)
                                    if !self.stopped { self.tally(attack, "closed by the server") }
                                })
                            {
                                open.append(channel)
                                self.tally(attack, "opened")
                            } else {
                                self.tally(attack, "refused or failed to connect")
                            }
                        }
                        // A byte on each, then wait.
                        for channel in open where channel.isActive {
                            channel.writeAndFlush(ByteBuffer(string: " "), promise: nil)
                        }
                        try? await Task.sleep(for: .nanoseconds(every.nanoseconds))
                    }
                }
            }
        }
    }

    /// Batches of new property names through the public write key.
    private func squat(_ index: Int) async {
        var round = 0
        while !stopped {
            let events = (0..<100).map { event in
                "{" + (0..<20).map { #""q\#(index)_\#(round)_\#(event)_\#($0)":1"# }.joined(separator: ",") + "}"
            }
            round += 1
            let answer = try? await http.request(
                "POST /3.0/projects/\(webProject)/events",
                headers: ["Authorization": webWriteKey, "Content-Type": "application/json"],
                body: #"{"squat":[\#(events.joined(separator: ","))]}"#, from: "127.0.0.23", timeout: .seconds(30))
            let refused = answer?.body.components(separatedBy: "InvalidPropertyNameError").count ?? 1
            tally(
                "property squatting",
                answer.map {
                    "\($0.status)" + ($0.status != 200 ? "" : refused > 1 ? " with names refused" : " all stored")
                }
                    ?? "no answer")
        }
    }

    private func standings() async {
        while !stopped {
            let answer = try? await http.request("GET /api/standings", from: "127.0.0.24", timeout: .seconds(30))
            tally("standings flood", answer.map { "\($0.status)" } ?? "no answer")
        }
    }
}
