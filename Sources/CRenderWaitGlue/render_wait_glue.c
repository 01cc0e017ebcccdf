#define _GNU_SOURCE
#include <linux/futex.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "render_wait_glue.h"

void gh_futex_wait(uint32_t *word, uint32_t expected) {
    syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, expected, NULL, NULL, 0);
}

void gh_futex_wait_for(uint32_t *word, uint32_t expected, long nanos) {
    struct timespec timeout = { .tv_sec = nanos / 1000000000L, .tv_nsec = nanos % 1000000000L };
    syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, expected, &timeout, NULL, 0);
}

void gh_futex_wake(uint32_t *word) { syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0); }

unsigned long gh_thread_self(void) { return (unsigned long)pthread_self(); }
