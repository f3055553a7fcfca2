import Alerts
import ArgumentParser
import Assembly
import Clocks
import Foundation
import Hummingbird
import Logging
import NIOCore
import NIOPosix
import Pipeline
import Retrosheet
import Server
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// `nohit-bench sse`: many Server-Sent Events clients on one `nohit serve` process while a day is
/// replayed fast: delay from each moment's publication to each client reading it, and memory
/// per connection.
struct SSEBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sse",
        abstract: "Many live-stream clients during a fast replay: moment → client delay (p50, p99) and memory per "
            + "connection."
    )

    @Option(help: "Concurrent SSE clients.")
    var clients = 10_000

    @Option(help: "Client processes sharing the clients (each on one event-loop thread).")
    var clientProcesses = 1

    @Option(help: "The server's event-loop threads (default: one per core, as `nohit serve` runs).")
    var serverThreads = System.coreCount

    @Flag(
        help:
            "Replay the plays alone, without the count after each pitch between them (the workload before the board followed pitches)."
    )
    var withoutPitches = false

    @Option(help: "The day's plays are spread evenly over this many seconds.")
    var seconds = 60.0

    @Option(help: "The day to replay.")
    var date = "2020-08-25"

    @Option(help: "Retrosheet data (the bundled 2020 season by default).")
    var data = "Data/retrosheet"

    static let cpuHogHelp =
        "Make the server short of CPU: pin it and a spin loop to CPU 0 (the spin loop takes about half of it), the "
        + "client processes to CPU 1."
    @Flag(help: ArgumentHelp(cpuHogHelp))
    var cpuHog = false

    func run() async throws {
        Self.raiseFileLimit(to: UInt64(clients) * 2 + 1024)
        var hog: Process?
        if cpuHog {
            try CPUAffinity.pinThisProcess(to: 0)
            let spin = Process()
            spin.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
            spin.arguments = ["spin", "--cpu", "0"]
            spin.standardOutput = FileHandle.nullDevice
            try spin.run()
            hog = spin
        }
        defer {
            if let hog {
                hog.terminate()
                hog.waitUntilExit()
            }
        }
        var logger = Logger(label: "nohit.bench.sse")
        logger.logLevel = .warning
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("nohit-sse-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }

        // The server as `nohit serve` builds it, with no delivery channels (this measures the
        // stream); each moment's time of publication noted just before the stream gets it.
        let games = try ReplaySchedule.games(on: date, data: [data])
        let clock = ManualWallClock(games.map(\.start).min()!.addingTimeInterval(-60))
        let recorder = Recorder()
        try await BenchService.run(
            work: work, data: data, clock: clock, serverThreads: serverThreads,
            consumers: [PublicationClock(recorder: recorder)], logger: logger
        ) { service, port in
            try await measure(service: service, port: port, games: games, clock: clock, recorder: recorder)
        }
    }

    /// The clients connected, the day replayed through the service's hub, the figures printed.
    func measure(service: NoHitService, port: Int, games: [ReplayGame], clock: ManualWallClock, recorder: Recorder)
        async throws
    {
        let feed = service.feed
        // The clients, in their own process (each side needs one descriptor per connection): as
        // many as this process can still open, with a few to spare.
        let room = Self.openFileLimit() - Self.openFiles() - 16
        let clients = min(self.clients, room)
        guard clients >= clientProcesses else {
            throw ValidationError(
                "room for \(clients) clients only (open files), fewer than --client-processes \(clientProcesses)")
        }
        if clients < self.clients {
            print(
                "note: \(self.clients) clients asked, \(clients) taken: the server process may open \(Self.openFileLimit()) "
                    + "files (its hard limit) and has \(Self.openFiles()) open")
        }
        let timeline = ReplayTimeline(games: games, announced: clock.now(), pitches: !withoutPitches)
        let all = timeline.entries
        // Every out of a notable bid is a moment where the service knows the odds of history.
        let moments = timeline.moments(everyOut: service.odds != nil).count
        let memoryBefore = ProcessMemory.kilobytes("VmRSS")
        let connectStart = ContinuousClock.now
        var children: [Process] = []
        var readers: [AsyncStream<String>.AsyncIterator] = []
        // Every client process started before any connects: starting a process copies this one's
        // descriptor table (Foundation's Process crashed doing so with 10,000 connections open).
        for index in 0..<clientProcesses {
            let share = clients / clientProcesses + (index < clients % clientProcesses ? 1 : 0)
            let (child, reader) = try Self.launchClients(
                port: port, clients: share, expect: moments * share, timeout: Int(seconds) + 120,
                cpu: cpuHog ? 1 : nil)
            children.append(child)
            readers.append(reader)
        }
        for index in readers.indices {
            guard let ready = await readers[index].next(), ready.hasPrefix("connected") else {
                throw ValidationError("a client process (for port \(port)) did not connect")
            }
        }
        while feed.clientCount < clients { try await Task.sleep(for: .milliseconds(20)) }
        let connected = ContinuousClock.now - connectStart
        let memoryAfter = ProcessMemory.kilobytes("VmRSS")

        // The day, its entries (each game's schedule, lineups, plays and end) spread evenly over
        // --seconds, through the game hub.
        let interval = Duration.seconds(seconds / Double(all.count))
        let cpuBefore = ProcessTimes.cpuSeconds()
        let start = ContinuousClock.now
        for (index, entry) in all.enumerated() {
            try await Task.sleep(until: start + interval * index, clock: .continuous)
            clock.advance(to: entry.time)
            try await service.hub.receive(entry.item, gameID: entry.gameID, at: entry.time)
        }
        let replayed = ContinuousClock.now - start
        // The client process reports each receipt ("id nanoseconds", CLOCK_MONOTONIC) once every
        // client has read every moment, or after a minute.
        let expected = moments * clients
        var clientMemory = 0
        var clientCPU = 0.0
        var clientSeconds = 0.0
        for index in readers.indices {
            while let line = await readers[index].next() {
                let fields = line.split(separator: " ")
                if fields.first == "rss", fields.count == 2 {
                    clientMemory += Int(fields[1]) ?? 0
                } else if fields.first == "cpu", fields.count == 3 {
                    clientCPU += Double(fields[1]) ?? 0
                    clientSeconds = max(clientSeconds, Double(fields[2]) ?? 0)
                } else if fields.count == 2, let nanoseconds = Int64(fields[1]) {
                    recorder.received(id: String(fields[0]), at: Self.instant(nanoseconds))
                }
            }
            children[index].waitUntilExit()
        }
        let elapsed = ContinuousClock.now - start
        let cpu = ProcessTimes.cpuSeconds() - cpuBefore
        let delays = recorder.delays().sorted()
        let events = feed.lastID

        func ms(_ duration: Duration) -> String {
            String(
                format: "%.1f ms",
                Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15)
        }
        func percentile(_ p: Double) -> Duration {
            delays.isEmpty ? .zero : delays[min(delays.count - 1, Int(Double(delays.count) * p))]
        }
        print(
            "workload: \(clients) SSE clients (HTTP/1.1; the clients in \(clientProcesses) other process(es), "
                + "each reading its sockets with epoll on 1 thread; the server on \(serverThreads) event-loop threads) "
                + "on `nohit serve`'s router, game hub, live board and stream while \(date) is replayed: "
                + "\(all.count) entries (each game's schedule, lineups and start, plays, "
                + (withoutPitches ? "" : "the count after each pitch between plays, ") + "end) over \(Int(seconds)) s, "
                + "each one a game event to every client, \(moments) moments; 2 cores; events written to the clients "
                + "from each event loop (LoopStream)"
                + (cpuHog
                    ? "; CPU hog: the server and a spin loop pinned to CPU 0, the client processes to CPU 1"
                    : "; CPUs \(CPUAffinity.allowed), not pinned"))
        print("connected: \(clients) clients in \(ms(connected))")
        print(
            "delivered: \(recorder.receipts) of \(expected) moment receipts; \(events * clients) events sent over "
                + ms(elapsed) + String(format: " (%.0f events/s)", Double(events * clients) / Self.seconds(elapsed)))
        let coalesced = feed.coalescedCount
        print(
            "coalesced: \(coalesced) events a client (or its event loop) that was behind got only as a newer state of "
                + String(
                    format: "the game (%.2f%% of events sent); every moment delivered",
                    Double(coalesced) * 100 / Double(max(1, events * clients))))
        print(
            "moment → client: p50 \(ms(percentile(0.50))), p99 \(ms(percentile(0.99))), max \(ms(delays.last ?? .zero))"
        )
        print(
            "server memory: \(memoryAfter - memoryBefore) KB more with \(clients) connections = "
                + String(format: "%.1f KB per connection", Double(memoryAfter - memoryBefore) / Double(clients))
                + "; server peak RSS \(ProcessMemory.kilobytes("VmHWM") / 1024) MB; client process RSS "
                + "\(clientMemory / 1024) MB (all client processes)")
        print(
            String(
                format: "cpu: %.2f s in the server process during the replay = %.2f s per million events sent "
                    + "(%.1f µs per event per client)", cpu, cpu / (Double(events * clients) / 1e6),
                cpu * 1e6 / Double(max(1, events * clients))))
        print(
            String(
                format: "client processes: %.2f s of CPU from connected to their last moment (%.1f s; the replay took "
                    + "%.1f s) = %.2f cores", clientCPU, clientSeconds, Self.seconds(replayed),
                clientCPU / max(clientSeconds, 0.001)))

        guard recorder.receipts == expected else {
            throw ValidationError("only \(recorder.receipts) of \(expected) moment receipts arrived")
        }
    }

    /// `nohit-bench sse-clients` as a process of its own, once it says its clients are connected:
    /// the process and the lines it prints after (each receipt, then `rss`).
    static func startClients(port: Int, clients: Int, expect: Int, timeout: Int, cpu: Int? = nil) async throws -> (
        Process, AsyncStream<String>.AsyncIterator
    ) {
        let (child, lines) = try launchClients(
            port: port, clients: clients, expect: expect, timeout: timeout, cpu: cpu)
        var reader = lines
        guard let ready = await reader.next(), ready.hasPrefix("connected") else {
            throw ValidationError("a client process (for port \(port)) did not connect")
        }
        return (child, reader)
    }

    /// `nohit-bench sse-clients` started: the process and its lines, the first of which says its
    /// clients are connected.
    static func launchClients(port: Int, clients: Int, expect: Int, timeout: Int, cpu: Int? = nil) throws -> (
        Process, AsyncStream<String>.AsyncIterator
    ) {
        let child = Process()
        child.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        child.arguments =
            [
                "sse-clients", "--port", "\(port)", "--clients", "\(clients)", "--expect", "\(expect)", "--timeout",
                "\(timeout)",
            ] + (cpu.map { ["--cpu", "\($0)"] } ?? [])
        let output = Pipe()
        child.standardOutput = output
        try child.run()
        return (child, lines(of: output.fileHandleForReading).makeAsyncIterator())
    }

    /// A CLOCK_MONOTONIC reading from another process, as an instant of this one's clock (the
    /// same clock on Linux).
    static func instant(_ nanoseconds: Int64) -> ContinuousClock.Instant {
        let now = ContinuousClock.now
        return now - (.nanoseconds(Self.monotonicNanoseconds()) - .nanoseconds(nanoseconds))
    }

    static func monotonicNanoseconds() -> Int64 { MonotonicClock.nanoseconds() }

    /// The lines a file handle yields, read on a thread of their own (blocking reads stay out of
    /// the concurrency pool).
    static func lines(of handle: FileHandle) -> AsyncStream<String> {
        let (stream, continuation) = AsyncStream.makeStream(of: String.self)
        let thread = Thread {
            var pending = Data()
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                pending.append(chunk)
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    continuation.yield(String(decoding: pending[pending.startIndex..<newline], as: UTF8.self))
                    pending.removeSubrange(pending.startIndex...newline)
                }
            }
            continuation.finish()
        }
        thread.start()
        return stream
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    static func raiseFileLimit(to wanted: UInt64) {
        var limit = rlimit()
        getrlimit(RLIMIT_NOFILE_VALUE, &limit)
        guard limit.rlim_cur < wanted else { return }
        var raised = rlimit(rlim_cur: rlim_t(wanted), rlim_max: max(limit.rlim_max, rlim_t(wanted)))
        if setrlimit(RLIMIT_NOFILE_VALUE, &raised) != 0 {
            raised = rlimit(rlim_cur: limit.rlim_max, rlim_max: limit.rlim_max)
            _ = setrlimit(RLIMIT_NOFILE_VALUE, &raised)
            print("note: open files limited to \(limit.rlim_max); \(wanted) wanted")
        }
    }

    /// The soft limit on open files now.
    static func openFileLimit() -> Int {
        var limit = rlimit()
        getrlimit(RLIMIT_NOFILE_VALUE, &limit)
        return Int(limit.rlim_cur)
    }

    /// Files this process has open now.
    static func openFiles() -> Int {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []).count
    }

    static var RLIMIT_NOFILE_VALUE: __rlimit_resource_t { __rlimit_resource_t(RLIMIT_NOFILE.rawValue) }
}

/// `nohit-bench sse-clients`: the benchmark's client side, as its own process. Prints
/// `connected` once every client has sent its request, then, when `--expect` moment receipts are
/// in (or after `--timeout` seconds), one `id nanoseconds` line per receipt and `rss KB`.
struct SSEClientsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sse-clients", abstract: "The SSE benchmark's clients (started by `nohit-bench sse`).",
        shouldDisplay: false)

    @Option var port: Int
    @Option var clients: Int
    @Option var expect: Int
    @Option var timeout = 120.0
    @Option var cpu: Int?
    /// Stop (and print the receipts) when standard input closes, whatever has arrived.
    @Flag var untilStdinCloses = false

    func run() async throws {
        if let cpu { try CPUAffinity.pinThisProcess(to: cpu) }
        SSEBenchmark.raiseFileLimit(to: UInt64(clients) + 1024)
        let recorder = Recorder()
        let clients = try EpollSSEClients()
        try clients.connect(port: port, count: self.clients)
        FileHandle.standardOutput.write(Data("connected \(clients.count)\n".utf8))
        let cpuConnected = ProcessTimes.cpuSeconds()
        let connectedAt = ContinuousClock.now
        let closed = Atomic(false)
        if untilStdinCloses {
            Thread {
                while !FileHandle.standardInput.availableData.isEmpty {}
                closed.store(true, ordering: .releasing)
            }.start()
        }
        // Read on a thread of its own (blocking in epoll_wait), until every moment expected has
        // come, the timeout, or standard input closes.
        let (expect, timeout) = (expect, timeout)
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            Thread {
                let start = ContinuousClock.now
                clients.read {
                    recorder.receipts >= expect || ContinuousClock.now - start >= .seconds(timeout)
                        || closed.load(ordering: .acquiring)
                } found: { id in
                    recorder.received(id: id, at: .now)
                }
                done.resume()
            }.start()
        }
        let cpu = ProcessTimes.cpuSeconds() - cpuConnected
        let seconds = SSEBenchmark.seconds(ContinuousClock.now - connectedAt)
        var text = ""
        for (id, at) in recorder.receiptsSinceBoot() { text += "\(id) \(at)\n" }
        text += "cpu \(cpu) \(seconds)\n"
        text += "rss \(ProcessMemory.kilobytes("VmRSS"))\n"
        FileHandle.standardOutput.write(Data(text.utf8))
    }
}

/// When each moment was published and when each client read it, by the moment's own id (a moment
/// the stream moves ahead of game updates carries no event id).
final class Recorder: Sendable {
    private struct State {
        var published: [String: ContinuousClock.Instant] = [:]
        var received: [(id: String, at: ContinuousClock.Instant)] = []
    }

    private let state = Mutex(State())

    func published(id: String, at instant: ContinuousClock.Instant) {
        state.withLock { $0.published[id] = instant }
    }

    func received(id: String, at instant: ContinuousClock.Instant) {
        state.withLock { $0.received.append((id, instant)) }
    }

    var receipts: Int { state.withLock { $0.received.count } }

    /// Each receipt as (moment id, CLOCK_MONOTONIC nanoseconds).
    func receiptsSinceBoot() -> [(String, Int64)] {
        let now = ContinuousClock.now
        let nanoseconds = SSEBenchmark.monotonicNanoseconds()
        return state.withLock { state in
            state.received.map { receipt in
                let ago = now - receipt.at
                let agoNanoseconds = ago.components.seconds * 1_000_000_000 + ago.components.attoseconds / 1_000_000_000
                return (receipt.id, nanoseconds - agoNanoseconds)
            }
        }
    }

    func delays() -> [Duration] {
        state.withLock { state in
            state.received.compactMap { receipt in state.published[receipt.id].map { receipt.at - $0 } }
        }
    }
}

/// Finds each `moment` event in a stream's bytes, read by read, and the moment's id (the first
/// `"id":"..."` in its data line). It looks for `event: moment` with `memchr` and `memcmp`
/// instead of reading every byte in Swift: the clients share the machine with the server, and what
/// they spend is taken from it (a game event is 1 to 2 KB, and 20,000 clients read 70,000 of them
/// a second).
struct MomentScanner {
    /// The end of the last read that may begin what the next one finishes: the last bytes (an
    /// `event: moment` line cut in two), or a moment whose data line was not complete.
    private var carry: [UInt8] = []
    private static let marker = Array("event: moment\ndata: ".utf8)
    private static let idKey = Array(#""id":""#.utf8)

    mutating func scan(_ read: UnsafeRawBufferPointer, found: (String) -> Void) {
        if carry.isEmpty {
            scanJoined(read, found: found)
        } else {
            var bytes = carry
            bytes.append(contentsOf: read)
            bytes.withUnsafeBytes { scanJoined($0, found: found) }
        }
    }

    private mutating func scanJoined(_ bytes: UnsafeRawBufferPointer, found: (String) -> Void) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        var from = 0
        while let marker = Self.find(Self.marker, in: bytes, from: from) {
            let line = marker + Self.marker.count
            guard let newline = memchr(base + line, Int32(UInt8(ascii: "\n")), bytes.count - line) else {
                // The moment's data line goes on in the next read.
                carry = Array(bytes[marker...])
                return
            }
            let end = base.distance(to: UnsafeRawPointer(newline))
            if let key = Self.find(Self.idKey, in: UnsafeRawBufferPointer(rebasing: bytes[line..<end]), from: 0) {
                let idStart = line + key + Self.idKey.count
                if let quote = memchr(base + idStart, Int32(UInt8(ascii: "\"")), end - idStart) {
                    let idEnd = base.distance(to: UnsafeRawPointer(quote))
                    found(String(decoding: UnsafeRawBufferPointer(rebasing: bytes[idStart..<idEnd]), as: UTF8.self))
                }
            }
            from = end + 1
        }
        // A marker cut by the end of the read.
        let keep = max(from, bytes.count - (Self.marker.count - 1))
        carry = keep < bytes.count ? Array(bytes[keep...]) : []
    }

    /// Where `needle` starts in `bytes` at or after `from`.
    private static func find(_ needle: [UInt8], in bytes: UnsafeRawBufferPointer, from: Int) -> Int? {
        guard let base = bytes.baseAddress, bytes.count - from >= needle.count else { return nil }
        // memchr for the first byte (Glibc's memmem is not exported to Swift), then a comparison.
        var at = from
        while bytes.count - at >= needle.count,
            let hit = memchr(base + at, Int32(needle[0]), bytes.count - at - needle.count + 1)
        {
            let start = base.distance(to: UnsafeRawPointer(hit))
            if needle.withUnsafeBytes({ memcmp(base + start, $0.baseAddress!, needle.count) }) == 0 { return start }
            at = start + 1
        }
        return nil
    }
}

/// Notes when each moment of a change goes on the stream (by the moment's id): placed
/// right before the live consumer, after the publisher has stored the moments.
struct PublicationClock: GameChangeConsumer {
    let recorder: Recorder

    func consume(_ change: GameChange) async throws {
        let now = ContinuousClock.now
        for moment in change.moments where moment.kind.isBid { recorder.published(id: moment.id, at: now) }
    }
}
