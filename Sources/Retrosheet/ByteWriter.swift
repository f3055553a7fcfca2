/// An append-only byte buffer for writing output on the hot path without the per-append
/// bookkeeping of `Array`: space is reserved once per row and written through a raw cursor.
/// The bytes live in an array whose count runs ahead of what is written, so `takeBytes()` hands
/// them over without copying.
package struct ByteWriter: Sendable {
    private var storage: [UInt8]
    package private(set) var count = 0

    package init(capacity: Int = 1 << 16) {
        let capacity = max(capacity, 64)
        storage = [UInt8](unsafeUninitializedCapacity: capacity) { _, initialized in initialized = capacity }
    }

    private mutating func reserve(_ extra: Int) {
        guard count + extra > storage.count else { return }
        var newCapacity = storage.count * 2
        while newCapacity < count + extra { newCapacity *= 2 }
        storage.append(contentsOf: repeatElement(0, count: newCapacity - storage.count))
    }

    /// Reserves `maximum` bytes and lets `body` write up to that many through a cursor; the
    /// cursor's position when `body` returns becomes the new end.
    package mutating func write(reserving maximum: Int, _ body: (inout ByteCursor) -> Void) {
        reserve(maximum)
        let start = count
        count += storage.withUnsafeMutableBufferPointer { buffer in
            let base = buffer.baseAddress! + start
            var cursor = ByteCursor(base, end: base + maximum)
            body(&cursor)
            return cursor.pointer - base
        }
    }

    package mutating func append(_ byte: UInt8) {
        write(reserving: 1) { $0.put(byte) }
    }

    package mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        write(reserving: bytes.count) { $0.put(bytes) }
    }

    package mutating func append(_ string: String) {
        var string = string
        string.withUTF8 { append($0) }
    }

    /// Drops everything written after the first `count` bytes.
    package mutating func truncate(to count: Int) {
        self.count = min(self.count, max(0, count))
    }

    /// The bytes written, handed over without a copy; the writer is left empty.
    package mutating func takeBytes() -> [UInt8] {
        var bytes: [UInt8] = []
        swap(&bytes, &storage)
        bytes.removeSubrange(count...)
        count = 0
        return bytes
    }

    /// The bytes written so far, copied.
    package var bytes: [UInt8] { Array(storage[..<count]) }
}

/// A write position inside space reserved by `ByteWriter.write(reserving:_:)`. Writes are not
/// checked against the end beyond a debug assertion: the caller reserves enough.
package struct ByteCursor {
    package private(set) var pointer: UnsafeMutablePointer<UInt8>
    private let end: UnsafeMutablePointer<UInt8>

    init(_ pointer: UnsafeMutablePointer<UInt8>, end: UnsafeMutablePointer<UInt8>) {
        self.pointer = pointer
        self.end = end
    }

    @inline(__always)
    package mutating func put(_ byte: UInt8) {
        assert(pointer < end)
        pointer.pointee = byte
        pointer += 1
    }

    @inline(__always)
    package mutating func put(_ bytes: UnsafeBufferPointer<UInt8>) {
        assert(pointer + bytes.count <= end)
        guard let source = bytes.baseAddress else { return }
        if bytes.count <= 16 {
            // Ids, codes and most event texts: a short loop beats a call to memmove.
            for index in 0..<bytes.count { pointer[index] = source[index] }
        } else {
            pointer.update(from: source, count: bytes.count)
        }
        pointer += bytes.count
    }

    /// Writes a non-negative number below 10,000 in decimal (anything larger is clamped: no
    /// count in a game comes near).
    @inline(__always)
    package mutating func put(decimal value: Int) {
        let value = min(max(value, 0), 9999)
        if value < 10 {
            put(UInt8(truncatingIfNeeded: value) &+ 0x30)
        } else if value < 100 {
            put(UInt8(truncatingIfNeeded: value / 10) &+ 0x30)
            put(UInt8(truncatingIfNeeded: value % 10) &+ 0x30)
        } else if value < 1000 {
            put(UInt8(truncatingIfNeeded: value / 100) &+ 0x30)
            put(UInt8(truncatingIfNeeded: value / 10 % 10) &+ 0x30)
            put(UInt8(truncatingIfNeeded: value % 10) &+ 0x30)
        } else {
            put(UInt8(truncatingIfNeeded: value / 1000) &+ 0x30)
            put(UInt8(truncatingIfNeeded: value / 100 % 10) &+ 0x30)
            put(UInt8(truncatingIfNeeded: value / 10 % 10) &+ 0x30)
            put(UInt8(truncatingIfNeeded: value % 10) &+ 0x30)
        }
    }

    /// Writes the characters of a packed player id (up to 8, first character in the lowest byte,
    /// zero-padded): the whole word is stored, and the cursor moves past its non-zero bytes (the
    /// padding written after them is overwritten by what comes next, or lies past the end).
    @inline(__always)
    package mutating func put(packed value: UInt64) {
        assert(pointer + 8 <= end)
        UnsafeMutableRawPointer(pointer).storeBytes(of: value.littleEndian, as: UInt64.self)
        pointer += (64 - value.leadingZeroBitCount + 7) >> 3
    }
}
