import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A `nohit serve` replaying a day under a fault (a full disk, PostgreSQL restarting): started
/// with everything it says collected, asked over HTTP, and stopped with SIGINT for its summary.
final class ServedDay: Sendable {
    let process: Process
    /// `http://127.0.0.1:PORT`, from the banner.
    let address: String
    private let transcript: Transcript

    /// What the process said, as it comes.
    final class Transcript: Sendable {
        let text = Mutex("")
    }

    /// Starts `executable arguments…` in `folder` (the command ends in `nohit serve … --port 0`) and
    /// returns once its banner names the address.
    static func start(_ executable: String, _ arguments: [String], in folder: URL) async throws -> ServedDay {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.currentDirectoryURL = folder
        let output = Pipe()
        process.standardError = output
        process.standardOutput = output
        let transcript = Transcript()
        output.fileHandleForReading.readabilityHandler = { handle in
            let chunk = handle.availableData
            transcript.text.withLock { $0 += String(decoding: chunk, as: UTF8.self) }
        }
        try process.run()
        do {
            let address = try await eventually("the banner", within: 120) {
                transcript.text.withLock { $0.firstMatch(of: /on (http:\/\/127\.0\.0\.1:\d+)/).map { String($0.1) } }
            }
            return ServedDay(process: process, address: address, transcript: transcript)
        } catch {
            process.terminate()
            process.waitUntilExit()
            throw error
        }
    }

    private init(process: Process, address: String, transcript: Transcript) {
        self.process = process
        self.address = address
        self.transcript = transcript
    }

    /// What it has said so far (standard output and error).
    var log: String { transcript.text.withLock { $0 } }

    /// `/readyz`'s status and body; status 0 when it did not answer.
    func readiness() async -> (status: Int, body: String) {
        guard let (body, response) = try? await URLSession.shared.data(from: URL(string: address + "/readyz")!)
        else { return (0, "") }
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: body, as: UTF8.self))
    }

    /// A gauge's value in `/metrics`.
    func metric(_ series: String) async throws -> Double? {
        let (body, _) = try await URLSession.shared.data(from: URL(string: address + "/metrics")!)
        let text = String(decoding: body, as: UTF8.self)
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix(series + " ") }) else { return nil }
        return Double(line.dropFirst(series.count + 1))
    }

    /// Returns once the day's 16 games are final and nothing is pending or being sent.
    func waitForTheDaysEnd(within seconds: Double = 300) async throws {
        let last = Mutex<String>("")
        do {
            _ = try await Self.eventually("the day's end with an empty outbox", within: seconds) { () -> Bool? in
                let final = try await metric("nohit_games{status=\"final\"}")
                let pending = try await metric("nohit_outbox{state=\"pending\"}")
                let sending = try await metric("nohit_outbox{state=\"sending\"}")
                last.withLock { $0 = "final \(final ?? -1), pending \(pending ?? -1), sending \(sending ?? -1)" }
                return final == 16 && pending == 0 && sending == 0 ? true : nil
            }
        } catch {
            // Where it stood, what it said last, and what every thread was doing: SIGQUIT (Swift's
            // backtracer prints them to the log; once, the day stood still for 10 minutes after
            // PostgreSQL restarted under a loaded run, cause unknown).
            let process = process
            kill(process.processIdentifier, SIGQUIT)
            _ = try? await Self.eventually("a backtrace", within: 60) { process.isRunning ? nil : true }
            throw Stuck(reason: "\(error) (last seen: \(last.withLock { $0 }))", log: String(log.suffix(40000)))
        }
    }

    /// SIGINT, then what it said by the time it exited. A stop that takes over `seconds` fails the
    /// test with what the process was doing: SIGQUIT (Swift's backtracer prints every thread to
    /// the log), then SIGKILL.
    func stop(within seconds: Double = 180) async throws -> String {
        kill(process.processIdentifier, SIGINT)
        let process = process
        do {
            _ = try await Self.eventually("nohit serve's stop after SIGINT", within: seconds) {
                process.isRunning ? nil : true
            }
        } catch {
            kill(process.processIdentifier, SIGQUIT)
            _ = try? await Self.eventually("a backtrace", within: 30) { process.isRunning ? nil : true }
            terminateIfRunning()
            throw Stuck(reason: "\(error)", log: log)
        }
        return log
    }

    struct Stuck: Error, CustomStringConvertible {
        var reason: String
        var log: String
        var description: String { "\(reason); it said:\n\(log)" }
    }

    /// Stops it at once if it is still running (a test that failed half-way).
    func terminateIfRunning() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// The stop summary's moments, alerts planned and delivered (with 0 failed).
    static func summary(_ log: String) -> (moments: Int, planned: Int, delivered: Int)? {
        log.firstMatch(of: /(\d+) moments \(\d+ new\), (\d+) alerts planned; (\d+) delivered, 0 failed/).map {
            (Int($0.1)!, Int($0.2)!, Int($0.3)!)
        }
    }

    /// Asks `probe` until it answers (every 100 ms), failing after `within` seconds and a last
    /// look (a starved run may wake past the deadline: what came meanwhile still counts).
    static func eventually<T>(_ what: String, within seconds: Double, _ probe: () async throws -> T?) async throws -> T
    {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while ContinuousClock.now < deadline {
            if let value = try await probe() { return value }
            try await Task.sleep(for: .milliseconds(100))
        }
        if let value = try await probe() { return value }
        throw Timeout(what: what, seconds: seconds)
    }

    struct Timeout: Error, CustomStringConvertible {
        var what: String
        var seconds: Double
        var description: String { "\(what) did not come within \(seconds) s" }
    }
}
