import Foundation

/// Runs a product built next to the tests (`.build/<config>/nohit`), or in the directory
/// `$NOHIT_TEST_PRODUCTS` names.
package enum Executable {
    /// The directory of the built products: `$NOHIT_TEST_PRODUCTS` when it is set (CI points it at
    /// the release build it packages, so the tests that start nohit run what ships, at a fraction of
    /// a debug build's CPU), else the build's own, beside the tests.
    package static let productsDirectory: URL = {
        if let given = ProcessInfo.processInfo.environment["NOHIT_TEST_PRODUCTS"], !given.isEmpty {
            let directory = URL(fileURLWithPath: given)
            guard FileManager.default.isExecutableFile(atPath: directory.appendingPathComponent("nohit").path) else {
                fatalError("NOHIT_TEST_PRODUCTS=\(given): no executable nohit there (a build's bin path)")
            }
            return directory
        }
        let candidates = [Bundle.main.bundleURL, URL(fileURLWithPath: CommandLine.arguments[0])]
        for candidate in candidates {
            var directory = candidate
            for _ in 0..<4 {
                directory = directory.deletingLastPathComponent()
                if FileManager.default.isExecutableFile(atPath: directory.appendingPathComponent("nohit").path) {
                    return directory
                }
            }
        }
        return Bundle.main.bundleURL.deletingLastPathComponent()
    }()

    /// Returns once the products are built. CI starts the tests beside the release build of the
    /// products they run (`NOHIT_TEST_PRODUCTS`), which names in `NOHIT_TEST_PRODUCTS_BUILT` a
    /// file it writes when that build ends, with its exit status: the tests that start nohit
    /// (those with threads of their own) wait for it before their turns, the others run meanwhile.
    /// Throws when the build failed.
    package static func productsBuilt() async throws {
        try await built.value
    }

    private static let built = Task<Void, any Error> {
        guard let path = ProcessInfo.processInfo.environment["NOHIT_TEST_PRODUCTS_BUILT"], !path.isEmpty else {
            return
        }
        let started = ContinuousClock.now
        let builder = ProcessInfo.processInfo.environment["NOHIT_TEST_PRODUCTS_BUILDER"].flatMap { Int32($0) }
        let status = try await onThread { try waitForFile(path, writtenBy: builder) }
        guard status == "0" else {
            throw ProductsNotBuilt(
                description: "the products the tests run were not built (\(path) says \(status)): see the build's log")
        }
        let waited = ContinuousClock.now - started
        if waited > .seconds(1) { print("products: built \(waited.components.seconds) s after the tests began") }
    }

    struct ProductsNotBuilt: Error, CustomStringConvertible { var description: String }

    /// The trimmed contents of `path` once it is there, waited for on inotify (the file is
    /// written elsewhere and moved into place whole); an error if the process `builder`
    /// (`NOHIT_TEST_PRODUCTS_BUILDER`), looked at every 10 s, ended without writing it.
    private static func waitForFile(_ path: String, writtenBy builder: Int32?) throws -> String {
        let directory = (path as NSString).deletingLastPathComponent
        let descriptor = inotify_init1(Int32(IN_CLOEXEC))
        guard descriptor >= 0 else { throw ProductsNotBuilt(description: "inotify_init1: errno \(errno)") }
        defer { close(descriptor) }
        guard inotify_add_watch(descriptor, directory, UInt32(IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE)) >= 0 else {
            throw ProductsNotBuilt(description: "cannot watch \(directory) for \(path): errno \(errno)")
        }
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            if let contents = try? String(contentsOfFile: path, encoding: .utf8)
                .trimmingCharacters(in: .whitespacesAndNewlines), !contents.isEmpty
            {
                return contents
            }
            var watched = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&watched, 1, 10_000)
            if ready < 0 && errno != EINTR {
                throw ProductsNotBuilt(description: "waiting for \(path): errno \(errno)")
            }
            if ready > 0 {
                _ = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            } else if ready == 0, let builder, kill(builder, 0) != 0, errno == ESRCH,
                (try? String(contentsOfFile: path, encoding: .utf8)) == nil
            {
                throw ProductsNotBuilt(description: "the build (process \(builder)) ended without writing \(path)")
            }
        }
    }

    /// Whether the products are an optimized build: their directory is a release build's bin path
    /// (`swift build -c release --show-bin-path` ends in `release`), as CI's `NOHIT_TEST_PRODUCTS` is.
    package static var isOptimized: Bool { productsDirectory.lastPathComponent == "release" }

    /// A product's path; an absolute path (an installed copy) as it is.
    static func url(_ name: String) -> URL {
        name.hasPrefix("/") ? URL(fileURLWithPath: name) : productsDirectory.appendingPathComponent(name)
    }

    package struct Output: Sendable {
        package var status: Int32
        package var standardOutput: String
        package var standardError: String
    }

    /// Runs `name arguments...` and waits for it. Output goes through temporary files, so a
    /// chatty process never blocks on a full pipe. `directory`: its working directory;
    /// `environment`: variables set besides this process's.
    package static func run(
        _ name: String, _ arguments: [String], in directory: URL? = nil, environment: [String: String] = [:]
    ) throws -> Output {
        let temporary = FileManager.default.temporaryDirectory
        let outURL = temporary.appendingPathComponent("nohit-out-\(UUID().uuidString)")
        let errURL = temporary.appendingPathComponent("nohit-err-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        defer {
            try? FileManager.default.removeItem(at: outURL)
            try? FileManager.default.removeItem(at: errURL)
        }
        let process = Process()
        process.executableURL = url(name)
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        process.standardOutput = try FileHandle(forWritingTo: outURL)
        process.standardError = try FileHandle(forWritingTo: errURL)
        try process.run()
        process.waitUntilExit()
        return Output(
            status: process.terminationStatus,
            standardOutput: String(decoding: try Data(contentsOf: outURL), as: UTF8.self),
            standardError: String(decoding: try Data(contentsOf: errURL), as: UTF8.self))
    }

    /// `run`, waited for on a thread of its own: a test that waits for a long process this way
    /// leaves Swift's cooperative threads (two on a two-core machine) to the other tests running
    /// beside it, whose sockets and deadlines would otherwise stall behind it.
    package static func runDetached(_ name: String, _ arguments: [String]) async throws -> Output {
        try await onThread { try run(name, arguments) }
    }

    /// Runs `body` (which waits: for a process, a pipe) on a thread of its own, not on one of
    /// Swift's cooperative threads.
    package static func onThread<Value: Sendable>(_ body: @escaping @Sendable () throws -> Value) async throws -> Value
    {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
        }
    }

    /// Starts `name arguments...`, reads its standard error until it holds `text`, the process
    /// ends, or `timeout` passes (then it is stopped); stops it, and returns what it read.
    package static func startCollecting(
        _ name: String, _ arguments: [String], until text: String, timeout: TimeInterval = 120
    ) throws -> String {
        try startCollecting(name, arguments, until: text, timeout: timeout, keepRunning: false).output
    }

    /// `startCollecting`, leaving the process running (`keepRunning`: it is returned, and its
    /// output keeps being drained) in `directory` with `environment` added to this process's.
    package static func startCollecting(
        _ name: String, _ arguments: [String], until text: String, timeout: TimeInterval = 120, keepRunning: Bool,
        in directory: URL? = nil, environment: [String: String] = [:]
    ) throws -> (output: String, process: Process?) {
        let process = Process()
        process.executableURL = url(name)
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        let errors = Pipe()
        // Both streams together: a fake's banner is on standard error, its description on output.
        process.standardError = errors
        process.standardOutput = errors
        try process.run()
        // A process that never says `text` is stopped, which ends the reading below.
        let deadline = DispatchWorkItem { if process.isRunning { process.terminate() } }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: deadline)
        var collected = ""
        while !collected.contains(text) {
            let chunk = errors.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            collected += String(decoding: chunk, as: UTF8.self)
        }
        deadline.cancel()
        if keepRunning && process.isRunning && collected.contains(text) {
            errors.fileHandleForReading.readabilityHandler = { _ = $0.availableData }
            return (collected, process)
        }
        process.terminate()
        process.waitUntilExit()
        return (collected, nil)
    }

    /// Starts `name arguments...` in the background and returns it with the address its banner
    /// names ("... on http://127.0.0.1:PORT ..."), without a trailing slash. Its standard error
    /// keeps being drained so it never blocks on a full pipe.
    package static func start(_ name: String, _ arguments: [String]) throws -> (process: Process, address: String) {
        let process = Process()
        process.executableURL = url(name)
        process.arguments = arguments
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        var banner = ""
        while !banner.contains(" on http://") {
            let chunk = errors.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            banner += String(decoding: chunk, as: UTF8.self)
        }
        errors.fileHandleForReading.readabilityHandler = { _ = $0.availableData }
        let after = banner.range(of: " on http://").map { banner[banner.index($0.lowerBound, offsetBy: 4)...] } ?? ""
        var address = after.split(whereSeparator: \.isWhitespace).first.map(String.init) ?? ""
        if address.hasSuffix("/") { address.removeLast() }
        return (process, address)
    }
}
