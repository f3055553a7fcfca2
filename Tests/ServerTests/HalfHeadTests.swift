import Foundation
import NIOCore
import NIOPosix
import Testing

@testable import Server

/// Half a request head held open (issue 57, item 4): 10,000 sockets each sending part of a head
/// held their slots for the whole header time, and at the cap 14 % of real requests were 503. A
/// connection that has not finished its first head within a fifth of that time is now as idle as
/// a keep-alive one: the first closed at the cap for a newcomer.
@Suite struct HalfHeadTests {
    /// A server taking 4 connections in all (the test client's own among them), `held` opened
    /// with `request` and left unfinished; once the gate counts them as the first to close, a
    /// newcomer from another address is served in place of one of them.
    static func newcomerServed(
        headerTimeout: TimeAmount, bodyTimeout: TimeAmount = .seconds(10), held request: String
    ) async throws {
        var limits = ConnectionLimits()
        limits.maxConnections = 4
        limits.maxConnectionsPerClient = 0
        limits.headerTimeout = headerTimeout
        limits.idleTimeout = .seconds(3600)
        limits.bodyTimeout = bodyTimeout
        // Marked at 12 s: a loaded machine's slow look still finds them, and its slow opening of
        // the three (once over 20 s in a full run) still has them all open. Closed (408) only at
        // the timeout, an hour on: with it at 60 s, CI's starved run saw them closed before the
        // newcomer came.
        let longest = Double(max(headerTimeout, bodyTimeout).nanoseconds) / 1e9
        precondition(longest > 60, "a timeout well past the 12 s mark")
        limits.slowShare = 12 / longest
        let gate = ConnectionGate(limits: limits)
        try await HardeningTests.live({ $0.gate = gate }) { port in
            var held: [(any Channel, HardeningTests.KeepAliveClient)] = []
            for _ in 0..<3 { held.append(try await HardeningTests.KeepAliveClient.open(port: port, request: request)) }
            // The event waited on: the gate counting them as the first to close at the cap.
            while gate.counts.idle < 3 { try await Task.sleep(for: .milliseconds(20)) }
            let newcomer = try await HardeningTests.KeepAliveClient.open(
                port: port, request: "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
                from: "127.0.0.9")
            let answer = try await newcomer.1.answered.futureResult.get()
            #expect(answer.hasPrefix("HTTP/1.1 200"), "\(answer.prefix(80))")
            #expect(gate.counts.evictedIdle >= 1)
            #expect(gate.counts.refusedTotal == 0)
            for client in held + [newcomer] { try? await client.0.close() }
        }
    }

    /// Half a request line: a fifth of the header time on, given way at the cap (before: 503).
    @Test(.timeLimit(.minutes(30))) func connectionsStuckInTheirFirstHeadGiveWayAtTheCap() async throws {
        try await Self.newcomerServed(headerTimeout: .seconds(3600), held: "GET /heal")
    }

    /// A body behind its pace: from a fifth of `http.body-timeout` on, a body slower than
    /// `http.minimum-body-rate` so far makes its connection one of the first closed at the cap
    /// (2,000 trickled bodies held their slots while real clients were refused).
    @Test(.timeLimit(.minutes(30))) func bodiesBehindTheirPaceGiveWayAtTheCap() async throws {
        try await Self.newcomerServed(
            headerTimeout: .seconds(3600), bodyTimeout: .seconds(3600),
            held: "POST /api/devices HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                + "Content-Length: 100000\r\n\r\n{")
    }
}
