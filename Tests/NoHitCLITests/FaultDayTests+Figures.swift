import FakeProviders
import Foundation
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The fault day's size: the test's (1,500 devices, the tests' `nohit` at their pace, the database's
/// faults, and the instance apart's with `NOHIT_TEST_FAULT_DAY_APART=1`) or the benchmark's
/// (`Benchmarks/run faults`: `NOHIT_TEST_FAULT_DAY_DEVICES`, and `NOHIT_TEST_FAULT_DAY_NOHIT`, the
/// instances' executable, a release build).
struct FaultDaySize {
    let devices: Int
    let nohit: URL?

    /// Whether the benchmark asked for this day (either variable set).
    var isBenchmark: Bool

    /// Whether the instance apart is paused and then cut off too (the benchmark's day, or
    /// `NOHIT_TEST_FAULT_DAY_APART=1`).
    var faultsApart: Bool {
        isBenchmark || ProcessInfo.processInfo.environment["NOHIT_TEST_FAULT_DAY_APART"] == "1"
    }

    /// The day's pace: 100 times real speed with the faults apart (the benchmark's, as its figures
    /// have always been measured): at 200 their wall-time lengths can outlast the day's alerts, and
    /// the instance apart then holds nothing when it is cut off (seed 13458174498532799840: the
    /// pause first, then PostgreSQL down 60 s). The database's faults alone: the paced tests' pace
    /// (``InstancesTests/pace``).
    var speed: Int { faultsApart ? 100 : InstancesTests.pace }

    static var fromEnvironment: FaultDaySize {
        get throws {
            let environment = ProcessInfo.processInfo.environment
            let count = environment["NOHIT_TEST_FAULT_DAY_DEVICES"]
            let path = environment["NOHIT_TEST_FAULT_DAY_NOHIT"]
            let devices = try count.map {
                try #require(
                    Int($0).flatMap { (100...100_000).contains($0) ? $0 : nil },
                    "NOHIT_TEST_FAULT_DAY_DEVICES=\($0): a number of devices from 100 to 100000 is needed")
            }
            if let path {
                try #require(
                    FileManager.default.isExecutableFile(atPath: path),
                    "NOHIT_TEST_FAULT_DAY_NOHIT=\(path): no executable there (a release build: swift build -c release)")
            }
            return FaultDaySize(
                devices: devices ?? 1_500, nohit: path.map { URL(fileURLWithPath: $0) },
                isBenchmark: count != nil || path != nil)
        }
    }
}

/// What the fault day's instances cost: their CPU time and peak resident memory, read from /proc
/// every half second while they run (the last reading before each one ends is its figure).
final class FaultDayFigures: Sendable {
    struct Reading: Sendable {
        var cpuSeconds = 0.0
        var peakKilobytes = 0
    }

    private let readings = Mutex<[String: Reading]>([:])
    private let sampler = Mutex<Task<Void, Never>?>(nil)
    private let ids: [String]

    init(processes: [(id: String, process: Process)]) {
        let pids = processes.map { ($0.id, $0.process.processIdentifier) }
        ids = pids.map(\.0)
        sampler.withLock {
            $0 = Task { [self] in
                while !Task.isCancelled {
                    for (id, pid) in pids {
                        // Merged with what was read before: an instance ended and not yet reaped
                        // reads no peak, and its CPU time only grows.
                        guard let reading = Self.read(pid) else { continue }
                        readings.withLock {
                            let before = $0[id] ?? Reading()
                            $0[id] = Reading(
                                cpuSeconds: max(before.cpuSeconds, reading.cpuSeconds),
                                peakKilobytes: max(before.peakKilobytes, reading.peakKilobytes))
                        }
                    }
                    try? await Task.sleep(for: .milliseconds(500))
                }
            }
        }
    }

    func stop() { sampler.withLock { $0?.cancel() } }

    /// The figures, with the day's workload.
    func said(alerts: Int, wall: Duration, size: FaultDaySize, label: String) -> String {
        let readings = readings.withLock { $0 }
        let cpu = ids.map { readings[$0]?.cpuSeconds ?? 0 }.reduce(0, +)
        let seconds = Double(wall.components.seconds) + Double(wall.components.attoseconds) / 1e18
        func format(_ value: Double, _ digits: Int = 1) -> String {
            value.formatted(.number.precision(.fractionLength(digits)))
        }
        return "\(label) figures: \(size.devices) devices, \(alerts) alerts, \(ids.count) instances ("
            + (size.nohit ?? Executable.productsDirectory.appendingPathComponent("nohit")).path
            + ") at \(size.speed) times the day's speed, "
            + "from the first start to the last exit \(format(seconds)) s; the instances' CPU "
            + ids.map { "\($0) \(format(readings[$0]?.cpuSeconds ?? 0)) s" }.joined(separator: ", ")
            + " (\(format(cpu)) s in all, \(format(cpu * 1000 / Double(max(1, alerts)), 2)) ms per alert); "
            + "peak resident memory "
            + ids.map { "\($0) \((readings[$0]?.peakKilobytes ?? 0) / 1024) MB" }.joined(separator: ", ")
    }

    /// A process's CPU seconds (user and system) and peak resident memory (`VmHWM`), nil once it
    /// has ended.
    static func read(_ pid: Int32) -> Reading? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let end = stat.lastIndex(of: ")")
        else { return nil }
        // After the command's name: state is field 3, utime 14 and stime 15 (proc(5)).
        let fields = stat[stat.index(after: end)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        return Reading(cpuSeconds: (user + system) / ticks, peakKilobytes: Self.kilobytes("VmHWM", in: status) ?? 0)
    }

    /// A `/proc/PID/status` field in kilobytes (`VmRSS`, `VmHWM`), nil once the process has ended.
    static func kilobytes(_ field: String, pid: Int32) -> Int? {
        (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)).flatMap { kilobytes(field, in: $0) }
    }

    static func kilobytes(_ field: String, in status: String) -> Int? {
        status.split(separator: "\n").first { $0.hasPrefix(field + ":") }
            .flatMap { $0.split(whereSeparator: \.isWhitespace).dropFirst().first.flatMap { Int($0) } }
    }
}

/// Every delivery the fakes accepted more than once, listed with its ids: its `apns-id`, how many
/// times, its device and collapse id, whether any acceptance carried another device or collapse id
/// (on either fake: a resend must carry the first's), and the faults it was in doubt at. Written to
/// `.build/test-output/fault-day-<seed>-repeats.tsv`.
struct FaultDayRepeats {
    let path: String
    /// Those accepted for another device or with another collapse id than before.
    let differed: [String]

    init(
        counts: [String: Int], own: FakeProviderState, others: FakeProviderState,
        inDoubt: [InstancesTests.Fault: Set<String>], seed: UInt64
    ) throws {
        var lines = ["apns-id\ttimes\tdevice\tcollapse-id\tsame ids each time\tin doubt at"]
        var differed: [String] = []
        for (id, count) in counts.sorted(by: { $0.key < $1.key }) where count > 1 {
            let seen = [own.notification(apnsID: id), others.notification(apnsID: id)].compactMap { $0 }
            let same =
                !own.acceptedDifferently(apnsID: id) && !others.acceptedDifferently(apnsID: id)
                && Set(seen.map(\.deviceToken)).count == 1 && Set(seen.map { $0.collapseID ?? "" }).count == 1
            if !same { differed.append(id) }
            let at = inDoubt.filter { $0.value.contains(id) }.map(\.key.rawValue).sorted().joined(separator: ",")
            lines.append(
                "\(id)\t\(count)\t\(seen.first?.deviceToken ?? "")\t\(seen.first?.collapseID ?? "")\t\(same)\t\(at)")
        }
        let directory = TestData.packageRoot.appendingPathComponent(".build/test-output")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let file = directory.appendingPathComponent("fault-day-\(seed)-repeats.tsv")
        try (lines.joined(separator: "\n") + "\n").write(to: file, atomically: true, encoding: .utf8)
        path = file.path
        self.differed = differed
    }
}
