import Foundation

/// Finding and processing Retrosheet event files.
package enum EventFiles {
    /// `paths` with each directory replaced by the event files in it (`.EVA`, `.EVN`, `.EVE`,
    /// `.EVF`, `.EVR`) and each zip file (Retrosheet's `1950eve.zip`, or one in a directory given)
    /// by the event files it holds, as paths inside it (`…/1950eve.zip/1950BOS.EVA`), sorted by
    /// name. A path that does not exist is an error.
    package static func expand(_ paths: [String]) throws(RetrosheetError) -> [String] {
        var files: [String] = []
        for path in paths {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                if ZipArchive.split(path) != nil {
                    // An entry of a zip file, named as a path inside it.
                    files.append(path)
                    continue
                }
                throw RetrosheetError(file: path, line: 0, text: "", reason: "no such file or directory")
            }
            if isDirectory.boolValue {
                let names: [String]
                do {
                    names = try FileManager.default.contentsOfDirectory(atPath: path)
                } catch {
                    throw RetrosheetError(file: path, line: 0, text: "", reason: "cannot list: \(error)")
                }
                files += names.filter(isEventFileName).sorted().map { (path as NSString).appendingPathComponent($0) }
                for name in names.filter(ZipArchive.isArchive).sorted() {
                    files += try archiveFiles((path as NSString).appendingPathComponent(name))
                }
            } else if ZipArchive.isArchive(path) {
                files += try archiveFiles(path)
            } else {
                files.append(path)
            }
        }
        return files
    }

    /// The event files in the zip file `path`, as paths inside it.
    static func archiveFiles(_ path: String) throws(RetrosheetError) -> [String] {
        try ZipArchive.open(path).names.filter(isEventFileName).map { "\(path)/\($0)" }
    }

    /// A season in `place`: its folder (`<place>/2020`) or Retrosheet's zip of it
    /// (`<place>/2020eve.zip`), whichever is there; nil when neither is.
    package static func season(_ year: Int, in place: String) -> String? {
        for candidate in ["\(year)", "\(year)eve.zip"] {
            let path = (place as NSString).appendingPathComponent(candidate)
            if FileManager.default.fileExists(atPath: path) { return path }
        }
        return nil
    }

    /// Whether `name` looks like a Retrosheet event file.
    package static func isEventFileName(_ name: String) -> Bool {
        let upper = name.uppercased()
        return [".EVA", ".EVN", ".EVE", ".EVF", ".EVR"].contains { upper.hasSuffix($0) }
    }

    /// Applies `transform` to every file, up to `concurrency` at a time, and hands each result to
    /// `deliver` in the order of `files` as soon as its turn comes, so results can be written out
    /// and freed while later files are still being read.
    package static func forEach<Output: Sendable>(
        _ files: [String], concurrency: Int = ProcessInfo.processInfo.activeProcessorCount,
        _ transform: @escaping @Sendable (String) -> Output, deliver: (Output) throws -> Void
    ) async rethrows {
        try await withThrowingTaskGroup(of: (Int, Output).self) { group in
            var waiting: [Int: Output] = [:]
            var next = 0
            var due = 0
            for _ in 0..<min(max(1, concurrency), files.count) {
                let index = next
                group.addTask { (index, await onThread { transform(files[index]) }) }
                next += 1
            }
            while let (index, output) = try await group.next() {
                waiting[index] = output
                while let ready = waiting.removeValue(forKey: due) {
                    try deliver(ready)
                    due += 1
                }
                if next < files.count {
                    let index = next
                    group.addTask { (index, await onThread { transform(files[index]) }) }
                    next += 1
                }
            }
        }
    }

    /// Applies `transform` to every file, up to `concurrency` at a time, and returns the results
    /// in the order of `files`.
    package static func map<Output: Sendable>(
        _ files: [String], concurrency: Int = ProcessInfo.processInfo.activeProcessorCount,
        _ transform: @escaping @Sendable (String) -> Output
    ) async -> [Output] {
        await withTaskGroup(of: (Int, Output).self) { group in
            var results = [Output?](repeating: nil, count: files.count)
            var next = 0
            for _ in 0..<min(max(1, concurrency), files.count) {
                let index = next
                group.addTask { (index, await onThread { transform(files[index]) }) }
                next += 1
            }
            for await (index, output) in group {
                results[index] = output
                if next < files.count {
                    let index = next
                    group.addTask { (index, await onThread { transform(files[index]) }) }
                    next += 1
                }
            }
            return results.map { $0! }
        }
    }

    /// Runs `work` (a file read and computed on: seconds of CPU) on a thread of its own, so that
    /// Swift's cooperative threads (as many as the cores) stay free for the tasks that answer
    /// requests and keep deadlines beside it.
    private static func onThread<Output: Sendable>(_ work: @escaping @Sendable () -> Output) async -> Output {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: work()) }
        }
    }
}
