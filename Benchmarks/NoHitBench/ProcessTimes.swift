import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// CPU time of this process.
enum ProcessTimes {
    /// User plus system CPU seconds consumed so far by all threads.
    static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6 + Double(usage.ru_stime.tv_sec)
            + Double(usage.ru_stime.tv_usec) / 1e6
    }

    /// User plus system CPU seconds consumed so far by the children this process has waited for.
    static func childrenCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_CHILDREN.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6 + Double(usage.ru_stime.tv_sec)
            + Double(usage.ru_stime.tv_usec) / 1e6
    }

    /// User plus system CPU seconds of another process so far (0 when it cannot be read).
    static func cpuSeconds(pid: Int32) -> Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return 0 }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // After the command: state is field 3, utime 14 and stime 15.
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// CPU seconds of every process whose command is `name` (a database server's processes), summed.
    static func cpuSeconds(ofProcessesNamed name: String) -> Double {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap(Int32.init).reduce(0) { total, pid in
            let command = (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines)
            return command == name ? total + cpuSeconds(pid: pid) : total
        }
    }
}

/// Memory figures of a process, from Linux's /proc.
enum ProcessMemory {
    /// A kilobyte field of `/proc/<pid>/status`: `VmRSS` (resident now), `VmHWM` (peak resident,
    /// since start or since `resetPeak`), `RssAnon` (the process's own pages), `RssFile` (mapped files).
    static func kilobytes(_ field: String, pid: String = "self") -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix(field + ":") {
            return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
        }
        return 0
    }

    /// Starts the peak (`VmHWM`) again from the resident set now (`clear_refs` 5, Linux 4.0 and
    /// later), so a peak measures one phase, not the set-up before it; false when refused.
    @discardableResult
    static func resetPeak(pid: String = "self") -> Bool {
        guard let file = FileHandle(forWritingAtPath: "/proc/\(pid)/clear_refs") else { return false }
        defer { try? file.close() }
        return (try? file.write(contentsOf: Data("5".utf8))) != nil
    }
}
