/// An append-only byte buffer for writing output on the hot path without the per-append
/// bookkeeping of `Array`.
package struct ByteWriter: ~Copyable {
    private var base: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    package private(set) var count = 0

    package init(capacity: Int = 1 << 16) {
        self.capacity = max(capacity, 64)
        self.base = UnsafeMutablePointer<UInt8>.allocate(capacity: self.capacity)
    }

    deinit { base.deallocate() }

    private mutating func grow(toHold extra: Int) {
        var newCapacity = capacity * 2
        while newCapacity < count + extra { newCapacity *= 2 }
        let newBase = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        newBase.update(from: base, count: count)
        base.deallocate()
        base = newBase
        capacity = newCapacity
    }

    package mutating func append(_ byte: UInt8) {
        if count == capacity { grow(toHold: 1) }
        base[count] = byte
        count += 1
    }

    package mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        if count + bytes.count > capacity { grow(toHold: bytes.count) }
        if let source = bytes.baseAddress { (base + count).update(from: source, count: bytes.count) }
        count += bytes.count
    }

    package mutating func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { append($0) }
    }

    package mutating func append(_ string: String) {
        var string = string
        string.withUTF8 { append($0) }
    }

    /// Appends `value` in decimal.
    package mutating func append(decimal value: Int) {
        if value >= 0 && value < 10 {
            append(UInt8(truncatingIfNeeded: value) &+ 0x30)
            return
        }
        if count + 21 > capacity { grow(toHold: 21) }
        var magnitude = value.magnitude
        if value < 0 {
            base[count] = UInt8(ascii: "-")
            count += 1
        }
        var digits = 0
        var probe = magnitude
        repeat {
            digits += 1
            probe /= 10
        } while probe > 0
        var index = count + digits - 1
        repeat {
            base[index] = UInt8(truncatingIfNeeded: magnitude % 10) &+ 0x30
            magnitude /= 10
            index -= 1
        } while magnitude > 0
        count += digits
    }

    /// Reserves `maximum` bytes and lets `body` write up to that many through a cursor; the
    /// cursor's position when `body` returns becomes the new end.
    package mutating func write(reserving maximum: Int, _ body: (inout ByteCursor) -> Void) {
        if count + maximum > capacity { grow(toHold: maximum) }
        var cursor = ByteCursor(base + count, end: base + count + maximum)
        body(&cursor)
        count = cursor.pointer - base
    }

    /// Drops everything written after the first `count` bytes.
    package mutating func truncate(to count: Int) {
        self.count = min(self.count, max(0, count))
    }

    /// The bytes written so far.
    package func withBytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result {
        try body(UnsafeBufferPointer(start: base, count: count))
    }

    /// The bytes written, as an array.
    package var bytes: [UInt8] { Array(UnsafeBufferPointer(start: base, count: count)) }
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
        if let source = bytes.baseAddress { pointer.update(from: source, count: bytes.count) }
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

    /// Writes the characters of a packed player id (up to 8).
    @inline(__always)
    package mutating func put(packed value: UInt64) {
        assert(pointer + 8 <= end)
        var value = value
        while value != 0 {
            pointer.pointee = UInt8(truncatingIfNeeded: value)
            pointer += 1
            value >>= 8
        }
    }
}
