import Clocks
import Foundation
import PostgresNIO
import Synchronization
import TestSupport
import Testing

@testable import Storage

/// A link to PostgreSQL cut silently (a switch gone, packets dropped, no reset): the server ends
/// the session once it cannot reach the client (its keepalives), but the client's socket, with
/// nothing to send while it waits for the answer, never hears of it. Seen as a replay instance that
/// never ended after its link came back (FaultDayTests' sever). A relay on loopback stands for the
/// link: silenced, it stops passing bytes either way and ends its side of the server's connections,
/// keeping the client's open and quiet.
@Suite(.postgres) struct SilentLinkTests {
    enum Wait: String, CaseIterable { case statement, rows, transaction }

    @Test(arguments: Wait.allCases) func aStatementWhoseAnswerIsLostFailsAtItsDeadlineAndTheStoreGoesOn(_ wait: Wait)
        async throws
    {
        let server = try #require(TestPostgres.url)
        let relay = try SilentRelay(to: try #require(URLComponents(string: server)))
        defer { relay.stop() }
        let location = try PostgresStore.Location(url: try relay.url(schema: "silent"))
        let deadline = Duration.seconds(3)
        // How late this process's timers run meanwhile: the deadline's may be as late (CI saw a
        // starved run hold the tests' threads off the CPU for over a minute).
        let lag = SchedulingLag()
        defer { lag.stop() }
        try await PostgresStore.withStore(location, secrets: .ephemeral(), deadline: deadline) { store in
            let sent = ContinuousClock.now
            let outcome = await Deadline.result(within: .seconds(300)) {
                // The server is busy a second, and the link goes quiet as the relay passes the
                // statement on (not at a time: under load a timer came after the answer).
                let query: PostgresQuery = "SELECT 1 FROM pg_sleep(1)"
                relay.silence(afterPassing: "pg_sleep(1)")
                switch wait {
                case .statement:
                    try await store.client.withConnection { connection in
                        _ = try await connection.query(query, logger: store.logger)
                    }
                case .rows:
                    try await store.execute(query)
                case .transaction:
                    try await store.transaction { connection in
                        _ = try await connection.query(query, logger: store.logger)
                    }
                }
            }
            let waited = ContinuousClock.now - sent
            let result = try #require(
                outcome, "the statement was still waiting 300 s after the link went quiet (\(wait))")
            let error = try #require(result.failure, "answered over a silent link (\(wait))")
            let late = lag.worst
            print("silent link (\(wait)): failed after \(waited) (timers up to \(late) late): \(error)")
            #expect(StorageFault(error)?.kind == .unreachable, "\(wait): \(String(reflecting: error))")
            #expect(
                waited >= deadline && waited < deadline + .seconds(3) + late,
                "\(wait): failed after \(waited), timers up to \(late) late")
            // The link back: the store goes on (a connection it held idle through the cut is reset
            // at its next statement, as the server resets what comes for a session it ended).
            relay.mend()
            var failures: [String] = []
            let back = ContinuousClock.now
            while true {
                do {
                    try await store.execute("SELECT 1")
                    break
                } catch {
                    failures.append("\(error)")
                    try #require(
                        ContinuousClock.now - back < .seconds(120) && StorageFault(error)?.kind == .unreachable,
                        "the store did not go on after the link came back (\(wait)): \(failures)")
                    try await Task.sleep(for: .milliseconds(100))
                }
            }
            print(
                "silent link (\(wait)): answered again \(ContinuousClock.now - back) after the link came back, "
                    + "\(failures.count) statements failing first")
            try await store.dropSchema()
        }
    }
}

extension SilentLinkTests {
    /// A connection listening for notifications hears nothing over a silent link, and would listen
    /// for good: it is asked something now and then, so it ends (and is listened again) once the
    /// link stops answering.
    @Test func aListenerOnASilentLinkEndsAndListensAgainOnceItIsBack() async throws {
        let server = try #require(TestPostgres.url)
        let relay = try SilentRelay(to: try #require(URLComponents(string: server)))
        defer { relay.stop() }
        let location = try PostgresStore.Location(url: try relay.url(schema: "silentlisten"))
        let deadline = Duration.seconds(3)
        let lag = SchedulingLag()
        defer { lag.stop() }
        try await PostgresStore.withStore(location, secrets: .ephemeral(), deadline: deadline) { store in
            let heard = Heard()
            let listening = Task { try await store.watchItems(run: "r") { heard.count() } }
            // Listening once a notification comes through.
            let through = await Deadline.result(within: .seconds(120)) {
                while heard.total == 0 {
                    try await store.execute("SELECT pg_notify(\(PostgresStore.itemsChannel), 'r')")
                    try await Task.sleep(for: .milliseconds(100))
                }
            }
            try #require(through != nil, "no notification heard over the link")
            relay.silence()
            let quiet = ContinuousClock.now
            let ended = await Deadline.result(within: .seconds(300)) { try await listening.value }
            let waited = ContinuousClock.now - quiet
            let result = try #require(ended, "still listening 300 s after the link went quiet")
            let late = lag.worst
            print(
                "silent link (listening): ended after \(waited) (timers up to \(late) late): "
                    + "\(String(describing: result.failure))")
            #expect(result.failure != nil, "listening ended without an error")
            // Asked every 3 s here (the deadline, below 30 s), each answer awaited 3 s; as late
            // as this process's timers ran.
            #expect(waited < .seconds(9) + late * 2, "ended after \(waited), timers up to \(late) late")
            relay.mend()
            let again = Heard()
            // As the services do: listened again when listening fails (a connection the pool held
            // idle through the cut is reset at its first statement).
            let relistened = Task {
                while !Task.isCancelled {
                    try? await store.watchItems(run: "r") { again.count() }
                    try? await Task.sleep(for: .milliseconds(100))
                }
            }
            defer { relistened.cancel() }
            let back = await Deadline.result(within: .seconds(120)) {
                while again.total == 0 {
                    try? await store.execute("SELECT pg_notify(\(PostgresStore.itemsChannel), 'r')")
                    try await Task.sleep(for: .milliseconds(100))
                }
            }
            #expect(back != nil, "no notification heard after the link came back")
            relistened.cancel()
            _ = await relistened.result
            try await store.dropSchema()
        }
    }

    final class Heard: Sendable {
        private let heard = Atomic(0)
        func count() { heard.add(1, ordering: .relaxed) }
        var total: Int { heard.load(ordering: .relaxed) }
    }
}

/// A TCP relay on loopback to a PostgreSQL server, which can go quiet: ``silence()`` drops every
/// byte either way from then on and shuts its connections to the server (as the server ends a
/// session it cannot reach), leaving the clients' connections open with nothing on them.
final class SilentRelay: Sendable {
    let port: Int
    private let target: (host: String, port: Int)
    private let listener: Int32
    private let state = Mutex(State())

    private struct State {
        var silent = false
        /// Bytes that silence the link once passed towards the server.
        var silenceAfter: [UInt8]?
        /// Every connection's two sockets, and whether its link is quiet.
        var pairs: [(client: Int32, server: Int32, quiet: Bool, reset: Bool)] = []
        var stopped = false
    }

    init(to server: URLComponents) throws {
        target = (server.host ?? "127.0.0.1", server.port ?? 5432)
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.listener = listener
        var address = Self.address(host: "127.0.0.1", port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, length) == 0 && getsockname(listener, $0, &length) == 0
            }
        }
        guard bound, listen(listener, 64) == 0 else {
            close(listener)
            throw RelayError(what: "the relay could not listen on loopback: errno \(errno)")
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        let thread = Thread { [self] in accepting() }
        thread.start()
    }

    /// The server's URL (`TestPostgres`'s, with a schema of its own) through the relay.
    func url(schema purpose: String) throws -> String {
        let url = try #require(TestPostgres.url(schema: purpose))
        var components = try #require(URLComponents(string: url))
        components.host = "127.0.0.1"
        components.port = port
        return try #require(components.string)
    }

    /// From now on nothing passes, and the server's ends are shut.
    func silence() {
        let servers = state.withLock { state -> [Int32] in
            state.silent = true
            for index in state.pairs.indices { state.pairs[index].quiet = true }
            return state.pairs.map(\.server)
        }
        for server in servers { shutdown(server, Int32(SHUT_RDWR)) }
    }

    /// ``silence()`` once bytes holding `text` have passed towards the server.
    func silence(afterPassing text: String) { state.withLock { $0.silenceAfter = Array(text.utf8) } }

    /// New connections pass again (those silenced stay quiet).
    func mend() { state.withLock { $0.silent = false } }

    func stop() {
        let sockets = state.withLock { state -> [Int32] in
            state.stopped = true
            return state.pairs.filter { !$0.reset }.flatMap { [$0.client, $0.server] }
        }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        for socket in sockets { shutdown(socket, Int32(SHUT_RDWR)) }
    }

    private func accepting() {
        while true {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }
            let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = Self.address(host: target.host, port: target.port)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
                }
            }
            let index = state.withLock { state -> Int? in
                guard connected, !state.stopped, !state.silent else { return nil }
                state.pairs.append((client, server, false, false))
                return state.pairs.count - 1
            }
            guard let index else {
                close(client)
                close(server)
                continue
            }
            Thread { [self] in pump(from: client, to: server, pair: index, towardsServer: true) }.start()
            Thread { [self] in pump(from: server, to: client, pair: index, towardsServer: false) }.start()
        }
    }

    /// Passes bytes until its source ends; a quiet pair's bytes are dropped. The client's end hears
    /// nothing while the link is quiet; once it is back, bytes the client sends on a quiet pair
    /// reset it (the server's answer to anything for a session it ended).
    private func pump(from source: Int32, to destination: Int32, pair: Int, towardsServer: Bool) {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            let (quiet, reset) = state.withLock { state -> (Bool, Bool) in
                let pass = !state.pairs[pair].quiet
                let reset = !pass && towardsServer && !state.silent && !state.pairs[pair].reset
                if reset { state.pairs[pair].reset = true }
                return (!pass, reset)
            }
            if reset {
                var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
                setsockopt(source, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
                close(source)
                return
            }
            if quiet { continue }
            var offset = 0
            while offset < count {
                let written = buffer.withUnsafeBytes { write(destination, $0.baseAddress! + offset, count - offset) }
                guard written > 0 else { break }
                offset += written
            }
            if towardsServer,
                state.withLock({ state -> Bool in
                    guard let marker = state.silenceAfter,
                        buffer[..<count].firstRange(of: marker) != nil
                    else { return false }
                    state.silenceAfter = nil
                    return true
                })
            {
                silence()
            }
        }
        if towardsServer { shutdown(destination, Int32(SHUT_WR)) }
    }

    private static func address(host: String, port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr(host)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        return address
    }

    struct RelayError: Error, CustomStringConvertible {
        var what: String
        var description: String { what }
    }
}
