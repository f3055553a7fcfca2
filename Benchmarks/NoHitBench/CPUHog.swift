import ArgumentParser
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Pinning to one CPU, and a spin loop that takes one: how `nohit-bench sse --cpu-hog` makes the
/// server short of CPU (the server and the spin loop share CPU 0, the clients have CPU 1).
enum CPUAffinity {
    /// Pins every thread of process `pid` (and so the threads they start) to `cpu`, with
    /// util-linux's `taskset -a -p` (glibc's `sched_setaffinity` is not visible to Swift).
    static func pin(_ pid: Int32, to cpu: Int) throws {
        let taskset = Process()
        taskset.executableURL = URL(fileURLWithPath: "/usr/bin/taskset")
        taskset.arguments = ["-a", "-p", "-c", "\(cpu)", "\(pid)"]
        taskset.standardOutput = FileHandle.nullDevice
        do {
            try taskset.run()
        } catch {
            throw ValidationError("could not run /usr/bin/taskset (util-linux) to pin to CPU \(cpu): \(error)")
        }
        taskset.waitUntilExit()
        guard taskset.terminationStatus == 0 else {
            throw ValidationError("taskset could not pin process \(pid) to CPU \(cpu) (allowed: \(allowed))")
        }
    }

    /// Pins this process.
    static func pinThisProcess(to cpu: Int) throws { try pin(getpid(), to: cpu) }

    /// The CPUs this process may run on (from /proc/self/status).
    static var allowed: String {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        return status.split(separator: "\n").first { $0.hasPrefix("Cpus_allowed_list:") }
            .map { $0.dropFirst("Cpus_allowed_list:".count).trimmingCharacters(in: .whitespaces) } ?? "?"
    }
}

/// `nohit-bench spin`: a busy loop pinned to one CPU until killed (or `--seconds`).
struct SpinCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "spin", abstract: "A busy loop pinned to one CPU (the SSE benchmark's CPU hog).",
        shouldDisplay: false)

    @Option var cpu = 0
    @Option var seconds = 3600.0

    func run() throws {
        try CPUAffinity.pinThisProcess(to: cpu)
        let end = ContinuousClock.now + .seconds(seconds)
        var spins: UInt64 = 0
        while ContinuousClock.now < end {
            for _ in 0..<100_000 { spins &+= 1 }
        }
        print(spins)
    }
}
