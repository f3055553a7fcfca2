#include "CAllocator.h"

// Any libc header defines __GLIBC__ on glibc (without one, the check below is never true).
#include <stdlib.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

void nohit_return_freed_memory(void) {
#if defined(__GLIBC__)
    malloc_trim(0);
#endif
}
