#define _GNU_SOURCE
#include <pthread.h>
#include <string.h>
#include <sched.h>
#include "thread_glue.h"
#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#include <pmmintrin.h>
#endif

void gh_enable_flush_to_zero(void) {
#if defined(__x86_64__) || defined(__i386__)
    _MM_SET_FLUSH_ZERO_MODE(_MM_FLUSH_ZERO_ON);
    _MM_SET_DENORMALS_ZERO_MODE(_MM_DENORMALS_ZERO_ON);
#elif defined(__aarch64__)
    unsigned long fpcr;
    __asm__ volatile("mrs %0, fpcr" : "=r"(fpcr));
    fpcr |= (1UL << 24);
    __asm__ volatile("msr fpcr, %0" : : "r"(fpcr));
#endif
}

void gh_name_thread(const char *name) {
    char shortened[16];
    strncpy(shortened, name, sizeof shortened - 1);
    shortened[sizeof shortened - 1] = 0;
    pthread_setname_np(pthread_self(), shortened);
}

int gh_thread_copy_scheduling(unsigned long thread, unsigned long model) {
    int policy = SCHED_OTHER;
    struct sched_param param = { 0 };
    int result = pthread_getschedparam((pthread_t)model, &policy, &param);
    if (result != 0) return result;
    return pthread_setschedparam((pthread_t)thread, policy, &param);
}

int gh_keep_to_current_cpu(void) {
    int cpu = sched_getcpu();
    if (cpu < 0) return -1;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return sched_setaffinity(0, sizeof set, &set) == 0 ? cpu : -1;
}

int gh_current_cpu(void) { return sched_getcpu(); }

int gh_allowed_cpu_count(void) {
    cpu_set_t set;
    return sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
}
