#ifndef NOHIT_CALLOCATOR_H
#define NOHIT_CALLOCATOR_H

/// Asks the C allocator to keep large freed blocks for reuse instead of returning them to the
/// kernel (glibc: mmap and trim thresholds). Does nothing where that is not available.
void nohit_keep_freed_memory_for_reuse(void);

#endif
