#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads whole files into memory with plain POSIX calls.
package enum FileBytes {
    /// The bytes of `path`: a file, or an entry of a zip file named as a path inside it
    /// (`…/1950eve.zip/1950BOS.EVA`, `ZipArchive`).
    package static func read(_ path: String) throws(RetrosheetError) -> [UInt8] {
        if path.utf8.count > 5, let (archive, entry) = ZipArchive.split(path) {
            return try ZipArchive.open(archive).contents(of: entry)
        }
        return try readPlain(path)
    }

    /// The bytes of the file `path`.
    static func readPlain(_ path: String) throws(RetrosheetError) -> [UInt8] {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else {
            throw RetrosheetError(
                file: path, line: 0, text: "", reason: "cannot open: \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            throw RetrosheetError(
                file: path, line: 0, text: "", reason: "cannot stat: \(String(cString: strerror(errno)))")
        }
        if (info.st_mode & S_IFMT) == S_IFDIR {
            throw RetrosheetError(file: path, line: 0, text: "", reason: "is a directory, not a file")
        }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        var filled = 0
        var failure: Int32 = 0
        bytes.withUnsafeMutableBytes { buffer in
            while filled < buffer.count {
                let result = Glibc.read(descriptor, buffer.baseAddress! + filled, buffer.count - filled)
                if result < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    return
                }
                if result == 0 { break }
                filled += result
            }
        }
        if failure != 0 {
            throw RetrosheetError(
                file: path, line: 0, text: "", reason: "cannot read: \(String(cString: strerror(failure)))")
        }
        if filled < bytes.count { bytes.removeSubrange(filled...) }
        return bytes
    }
}
