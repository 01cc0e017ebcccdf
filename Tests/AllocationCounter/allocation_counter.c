// Interposes the C allocator for the whole test process (symbols in the executable win over libc's)
// and counts the calls made by threads that asked to be counted. Every call forwards to glibc, and memory a thread
// asked to receive zeroed (clean_allocation_glue.h) is zeroed as the production interposers do.
// Under AddressSanitizer or ThreadSanitizer the sanitizer owns the allocator (it intercepts these symbols itself and
// is not ready when the first of them is called): the interposers step aside, nothing is counted, and
// gh_allocation_counter_available() says so.
#include "allocation_counter.h"
#include "clean_allocation_glue.h"
#include <stdlib.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define GH_UNDER_SANITIZER 1
#endif
#endif

#ifdef GH_UNDER_SANITIZER
int gh_allocation_counter_available(void) { return 0; }
#else
int gh_allocation_counter_available(void) { return 1; }
#endif

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

static __thread int counting;
static __thread size_t count;
static __thread int probing;
static size_t probe_total;

void gh_allocation_counter_begin(void) { count = 0; counting = 1; }
size_t gh_allocation_counter_end(void) { counting = 0; return count; }
void gh_allocation_counter_probe(int on) { probing = on; }
size_t gh_allocation_counter_probe_total(void) { return __atomic_load_n(&probe_total, __ATOMIC_RELAXED); }

static inline void note(void) {
    if (counting) count++;
    if (probing) __atomic_fetch_add(&probe_total, 1, __ATOMIC_RELAXED);
}

#ifndef GH_UNDER_SANITIZER

void *malloc(size_t n) {
    note();
    void *p = __libc_malloc(n);
    gh_clean_allocation(p, n);
    return p;
}
void *calloc(size_t a, size_t b) { note(); return __libc_calloc(a, b); }
void *realloc(void *p, size_t n) { note(); return __libc_realloc(p, n); }
void free(void *p) { if (p) note(); __libc_free(p); }
static void *aligned(size_t a, size_t n) {
    note();
    void *p = __libc_memalign(a, n);
    gh_clean_allocation(p, n);
    return p;
}
void *aligned_alloc(size_t a, size_t n) { return aligned(a, n); }
void *memalign(size_t a, size_t n) { return aligned(a, n); }
int posix_memalign(void **out, size_t a, size_t n) {
    note();
    void *p = __libc_memalign(a, n);
    if (!p) return 12;
    gh_clean_allocation(p, n);
    *out = p;
    return 0;
}
#endif
