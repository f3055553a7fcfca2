import CAllocator

/// Allocator settings for batch reading.
package enum AllocatorTuning {
    /// Keeps large freed blocks (file bytes, output rows) in the allocator for the next file
    /// instead of returning them to the kernel: every block glibc returns is a set of fresh pages
    /// to fault in and zero again, which on a VM costs more than the parsing. Call once at start.
    package static func keepFreedMemoryForReuse() {
        nohit_keep_freed_memory_for_reuse()
    }
}
