import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A PostgreSQL cluster of a fault test's own (initdb in a scratch directory, on a free port): what
/// the test crashes, stalls or cuts off. The suites' shared one is not touched.
struct PostgresCluster {
    let bin: String
    let directory: String
    let port: Int
    /// The addresses it listens on.
    let listen: [String]

    /// Why this machine cannot run one, or nil: it needs NOHIT_TEST_POSTGRES (the extended suites),
    /// root (to run the server as `postgres`) and PostgreSQL's binaries. CI has all three.
    static var unavailable: String? {
        guard ProcessInfo.processInfo.environment["NOHIT_TEST_POSTGRES"] != nil else { return "NOHIT_TEST_POSTGRES" }
        guard geteuid() == 0 else { return "root" }
        return binaries == nil ? "PostgreSQL's binaries" : nil
    }

    static var binaries: String? {
        (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql"))?.sorted {
            $0.compare($1, options: .numeric) == .orderedAscending
        }.last.map { "/usr/lib/postgresql/\($0)/bin" }.flatMap {
            FileManager.default.isExecutableFile(atPath: $0 + "/initdb") ? $0 : nil
        }
    }

    /// Makes the cluster and starts it, listening on `listen`, clients from `trusting` (networks in
    /// CIDR notation, beside loopback) let in without a password, as loopback is.
    init(listen: [String] = ["127.0.0.1"], trusting: [String] = []) throws {
        bin = try #require(Self.binaries)
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("nohit-pg-\(UUID())").path
        port = try ProxyTests.freePort()
        self.listen = listen
        try run("init", trusting.map { "host all all \($0) trust" }.joined(separator: "\n"))
    }

    /// `postgres://` for the database `nohit`, through `host` (the first address it listens on).
    func url(host: String? = nil) -> String { "postgres://nohit@\(host ?? listen[0]):\(port)/nohit" }

    /// `init` (its argument: lines for pg_hba.conf), `crash` (`pg_ctl stop -m immediate`), `start`,
    /// `sql` (its argument: a statement, answered unaligned), `stall`/`resume` (every process of
    /// the cluster stopped or let go on).
    @discardableResult func run(_ what: String, _ argument: String = "") throws -> String {
        let result = try Executable.run(
            "/bin/bash",
            ["-c", Self.control, "pg", bin, directory, "\(port)", what, argument, listen.joined(separator: ",")])
        try #require(result.status == 0, "the cluster's \(what): \(result.standardError)")
        return result.standardOutput
    }

    /// Stops the server (as a crash: nothing to wait for) and removes its files.
    func remove() {
        _ = try? run("crash")
        try? FileManager.default.removeItem(atPath: directory)
    }

    private static let control = """
        set -e
        bin="$1"; dir="$2"; port="$3"; what="$4"; argument="$5"; listen="$6"
        # The server outlives this shell: it must not hold a descriptor the test waits on (the
        # one by which Foundation sees this shell end).
        for fd in $(ls /proc/$$/fd); do if [ "$fd" -gt 2 ]; then eval "exec $fd>&-" 2>/dev/null || true; fi; done
        as() { runuser -u postgres -- "$@"; }
        case "$what" in
          init)
            mkdir -p "$dir"; chown postgres "$dir"
            as "$bin/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >/dev/null
            printf "listen_addresses = '%s'\\nport = %s\\nunix_socket_directories = '%s'\\n" "$listen" "$port" "$dir" \
              | as tee -a "$dir/data/postgresql.conf" >/dev/null
            if [ -n "$argument" ]; then printf '%s\\n' "$argument" | as tee -a "$dir/data/pg_hba.conf" >/dev/null; fi
            as "$bin/pg_ctl" -D "$dir/data" -l "$dir/log" -w -t 60 start >/dev/null
            as "$bin/psql" -h 127.0.0.1 -p "$port" -U postgres -qc "CREATE ROLE nohit LOGIN" \
              -qc "CREATE DATABASE nohit OWNER nohit" ;;
          crash) as "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null ;;
          start) as "$bin/pg_ctl" -D "$dir/data" -l "$dir/log" -w -t 60 start >/dev/null ;;
          sql) as "$bin/psql" -h 127.0.0.1 -p "$port" -U postgres -d nohit -At -F ' ' -c "$argument" ;;
          stall|resume)
            pid=$(head -1 "$dir/data/postmaster.pid")
            signal=STOP; if [ "$what" = resume ]; then signal=CONT; fi
            # shellcheck disable=SC2046
            kill -s "$signal" $(ps -o pid= --ppid "$pid") "$pid" ;;
        esac
        """
}
