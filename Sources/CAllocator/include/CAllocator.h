#ifndef NOHIT_CALLOCATOR_H
#define NOHIT_CALLOCATOR_H

/// Returns freed memory the C allocator still holds to the kernel (glibc: malloc_trim), so the
/// resident set shows what is in use (benchmarks). Does nothing where that is not available.
void nohit_return_freed_memory(void);

#endif
