#include "CAllocator.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

void nohit_keep_freed_memory_for_reuse(void) {
#if defined(__GLIBC__)
    mallopt(M_MMAP_THRESHOLD, 256 << 20);
    mallopt(M_TRIM_THRESHOLD, 512 << 20);
#endif
}
