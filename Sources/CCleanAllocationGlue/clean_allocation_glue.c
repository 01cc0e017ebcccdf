// Interposes the C allocator's uninitializing entry points (symbols in the executable win over libc's) so that the
// thread instantiating a plugin receives zeroed memory. The definitions are weak: a test executable that counts
// allocations (Tests/AllocationCounter) defines its own, which call gh_clean_allocation too.
#include "clean_allocation_glue.h"
#include <string.h>

extern void *__libc_malloc(size_t);
extern void *__libc_memalign(size_t, size_t);

static __thread int zeroing;

void gh_zero_new_memory(int on) { zeroing = on; }

void gh_clean_allocation(void *memory, size_t size) {
    if (zeroing && memory) memset(memory, 0, size);
}

__attribute__((weak)) void *malloc(size_t n) {
    void *p = __libc_malloc(n);
    gh_clean_allocation(p, n);
    return p;
}

__attribute__((weak)) void *aligned_alloc(size_t a, size_t n) {
    void *p = __libc_memalign(a, n);
    gh_clean_allocation(p, n);
    return p;
}

__attribute__((weak)) void *memalign(size_t a, size_t n) {
    void *p = __libc_memalign(a, n);
    gh_clean_allocation(p, n);
    return p;
}

__attribute__((weak)) int posix_memalign(void **out, size_t a, size_t n) {
    void *p = __libc_memalign(a, n);
    if (!p) return 12;
    gh_clean_allocation(p, n);
    *out = p;
    return 0;
}
