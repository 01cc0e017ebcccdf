#ifndef GH_RENDER_WAIT_GLUE_H
#define GH_RENDER_WAIT_GLUE_H

#include <stdint.h>

/// What render threads may call to wait for each other: futexes (no lock in user space, no allocation), the
/// processor's spin hint and the thread's id.

/// Sleeps while the 32-bit word at `word` holds `expected` (a private futex; returns at once otherwise, and may return
/// early: callers check their condition again).
void gh_futex_wait(uint32_t *word, uint32_t expected);

/// As `gh_futex_wait`, for at most `nanos` nanoseconds.
void gh_futex_wait_for(uint32_t *word, uint32_t expected, long nanos);

/// Wakes every thread sleeping on `word`.
void gh_futex_wake(uint32_t *word);

/// Tells the processor the calling thread is spinning (x86 `pause`), sparing its sibling hyperthread and power.
static inline void gh_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ volatile("yield");
#endif
}

/// The calling thread's id as pthread gives it (no system call).
unsigned long gh_thread_self(void);

#endif
