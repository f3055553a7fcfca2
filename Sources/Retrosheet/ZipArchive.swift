import CZlib
import Foundation
import Synchronization

/// A zip file as Retrosheet distributes seasons (`1950eve.zip`: event files, rosters, the TEAM
/// file): its entries by name, each read (stored or deflated, CRC-checked) on demand. An entry is
/// named as a path inside the archive's: `…/1950eve.zip/1950BOS.EVA`, which `FileBytes.read` and
/// `EventFiles.expand` take like any file, so every command that reads seasons reads zips.
/// Zip64, encryption and methods other than store and deflate are refused, each said.
package struct ZipArchive: Sendable {
    package struct Entry: Sendable {
        package var name: String
        var method: UInt16
        var crc: UInt32
        var compressedSize: Int
        var size: Int
        var localHeader: Int
    }

    package let path: String
    package let entries: [String: Entry]
    private let data: [UInt8]

    /// Reads the archive's directory.
    package init(path: String) throws(RetrosheetError) {
        self.path = path
        data = try FileBytes.readPlain(path)
        entries = try Self.directory(data, path: path)
    }

    /// The names of the entries, sorted.
    package var names: [String] { entries.keys.sorted() }

    private func failure(_ reason: String) -> RetrosheetError {
        RetrosheetError(file: path, line: 0, text: "", reason: reason)
    }

    private static func directory(_ data: [UInt8], path: String) throws(RetrosheetError) -> [String: Entry] {
        func failure(_ reason: String) -> RetrosheetError {
            RetrosheetError(file: path, line: 0, text: "", reason: "not a zip file Retrosheet's way: \(reason)")
        }
        // The end-of-central-directory record: 22 bytes and a comment of up to 65,535, at the end.
        let lowest = max(0, data.count - 22 - 65_535)
        var end = -1
        var index = data.count - 22
        while index >= lowest {
            if data.uint32(at: index) == 0x0605_4B50 {
                end = index
                break
            }
            index -= 1
        }
        guard end >= 0 else { throw failure("no end-of-central-directory record") }
        let count = Int(data.uint16(at: end + 10))
        let size = Int(data.uint32(at: end + 12))
        let offset = Int(data.uint32(at: end + 16))
        guard count != 0xFFFF, offset != 0xFFFF_FFFF else { throw failure("zip64 archives are not read") }
        guard offset + size <= end else { throw failure("the central directory runs past its end") }
        var entries: [String: Entry] = [:]
        var cursor = offset
        for _ in 0..<count {
            guard cursor + 46 <= end, data.uint32(at: cursor) == 0x0201_4B50 else {
                throw failure("a damaged central directory entry at byte \(cursor)")
            }
            let flags = data.uint16(at: cursor + 8)
            let nameLength = Int(data.uint16(at: cursor + 28))
            let extraLength = Int(data.uint16(at: cursor + 30))
            let commentLength = Int(data.uint16(at: cursor + 32))
            guard cursor + 46 + nameLength <= end else { throw failure("an entry's name runs past the directory") }
            let name = String(decoding: data[(cursor + 46)..<(cursor + 46 + nameLength)], as: UTF8.self)
            guard flags & 1 == 0 else { throw failure("\(name) is encrypted") }
            let entry = Entry(
                name: name, method: data.uint16(at: cursor + 10), crc: data.uint32(at: cursor + 16),
                compressedSize: Int(data.uint32(at: cursor + 20)), size: Int(data.uint32(at: cursor + 24)),
                localHeader: Int(data.uint32(at: cursor + 42)))
            // Folders are left out; a name in a folder is kept whole ("1950/1950BOS.EVA").
            if !name.hasSuffix("/") { entries[name] = entry }
            cursor += 46 + nameLength + extraLength + commentLength
        }
        return entries
    }

    /// The bytes of the entry `name`.
    package func contents(of name: String) throws(RetrosheetError) -> [UInt8] {
        let shown = "\(path)/\(name)"
        guard let entry = entries[name] else {
            throw RetrosheetError(file: shown, line: 0, text: "", reason: "no such entry in \(path)")
        }
        let header = entry.localHeader
        guard header + 30 <= data.count, data.uint32(at: header) == 0x0403_4B50 else {
            throw RetrosheetError(file: shown, line: 0, text: "", reason: "a damaged local header")
        }
        let start = header + 30 + Int(data.uint16(at: header + 26)) + Int(data.uint16(at: header + 28))
        guard start + entry.compressedSize <= data.count else {
            throw RetrosheetError(file: shown, line: 0, text: "", reason: "the entry runs past the end of the file")
        }
        let bytes: [UInt8]
        switch entry.method {
        case 0:
            bytes = Array(data[start..<(start + entry.compressedSize)])
        case 8:
            bytes = try inflate(start: start, entry: entry, shown: shown)
        default:
            throw RetrosheetError(
                file: shown, line: 0, text: "",
                reason: "compressed with method \(entry.method); only stored and deflated entries are read")
        }
        let crc = bytes.withUnsafeBufferPointer { buffer in
            UInt32(crc32(0, buffer.baseAddress, uInt(buffer.count)))
        }
        guard bytes.count == entry.size, crc == entry.crc else {
            throw RetrosheetError(file: shown, line: 0, text: "", reason: "damaged: its size or CRC-32 does not match")
        }
        return bytes
    }

    private func inflate(start: Int, entry: Entry, shown: String) throws(RetrosheetError) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: entry.size)
        var status: Int32 = Z_OK
        var produced = 0
        data.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { out in
                var stream = z_stream()
                // Raw deflate (a zip entry has no zlib header): negative window bits.
                status = inflateInit2_(&stream, -MAX_WBITS, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
                guard status == Z_OK else { return }
                defer { inflateEnd(&stream) }
                stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress! + start)
                stream.avail_in = uInt(entry.compressedSize)
                // An empty entry still needs somewhere to point.
                var spare: UInt8 = 0
                stream.next_out = out.baseAddress ?? withUnsafeMutablePointer(to: &spare) { $0 }
                stream.avail_out = uInt(out.count)
                status = CZlib.inflate(&stream, Z_FINISH)
                produced = Int(stream.total_out)
            }
        }
        guard status == Z_STREAM_END, produced == entry.size else {
            throw RetrosheetError(file: shown, line: 0, text: "", reason: "cannot inflate it (zlib status \(status))")
        }
        return output
    }

    // MARK: Paths inside archives

    /// `…/1950eve.zip/1950BOS.EVA` as the archive's path and the entry's name; nil for a path
    /// with no `.zip` folder in it that is a file.
    package static func split(_ path: String) -> (archive: String, entry: String)? {
        var search = path.startIndex
        while let found = path.range(of: ".zip/", options: .caseInsensitive, range: search..<path.endIndex) {
            let archive = String(path[..<found.upperBound].dropLast())
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: archive, isDirectory: &isDirectory), !isDirectory.boolValue {
                return (archive, String(path[found.upperBound...]))
            }
            search = found.upperBound
        }
        return nil
    }

    /// Whether `path` names a zip file (by its name).
    package static func isArchive(_ path: String) -> Bool { path.lowercased().hasSuffix(".zip") }

    private static let cache = Mutex<[(path: String, archive: ZipArchive)]>([])

    /// The archive at `path`, from a small cache (a season's files are read one by one).
    package static func open(_ path: String) throws(RetrosheetError) -> ZipArchive {
        if let cached = cache.withLock({ $0.first { $0.path == path }?.archive }) { return cached }
        let archive = try ZipArchive(path: path)
        cache.withLock {
            $0.removeAll { $0.path == path }
            $0.insert((path, archive), at: 0)
            if $0.count > 4 { $0.removeLast() }
        }
        return archive
    }
}

extension [UInt8] {
    fileprivate func uint16(at index: Int) -> UInt16 {
        UInt16(self[index]) | UInt16(self[index + 1]) << 8
    }

    fileprivate func uint32(at index: Int) -> UInt32 {
        UInt32(self[index]) | UInt32(self[index + 1]) << 8 | UInt32(self[index + 2]) << 16
            | UInt32(self[index + 3]) << 24
    }
}
