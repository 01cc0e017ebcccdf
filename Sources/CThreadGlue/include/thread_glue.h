#ifndef GH_THREAD_GLUE_H
#define GH_THREAD_GLUE_H

#include <stdint.h>

/// Sets flush-to-zero and denormals-are-zero for the calling thread, so decaying filter
/// states never fall into slow denormal arithmetic. Call once on every render thread.
void gh_enable_flush_to_zero(void);

/// Names the calling thread (as `ps -L` and `top -H` show it; Linux keeps 15 bytes).
void gh_name_thread(const char *name);

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

/// Gives the thread `thread` the scheduling policy and priority of the thread `model` (a worker follows PipeWire's
/// data thread); returns 0 or an errno.
int gh_thread_copy_scheduling(unsigned long thread, unsigned long model);

#endif
