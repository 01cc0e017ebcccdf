#include "lv2_glue.h"
#include <lv2/log/log.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SLOTS 256
#define SLOT_SIZE 512

struct gh_lv2_log {
    LV2_Log_Log feature;
    uint32_t urids[4];
    /* Writers reserve a free slot with a compare-and-swap and publish it with `ready`; one reader drains. A message
     * that finds every slot taken is dropped and counted, and reserves nothing, so the ring never wedges. */
    uint64_t reserved;
    uint64_t read;
    uint64_t dropped;
    int ready[SLOTS];
    int level[SLOTS];
    char text[SLOTS][SLOT_SIZE];
};

static int level_of(gh_lv2_log *log, LV2_URID type) {
    for (int i = 0; i < 4; i++) if (log->urids[i] == type) return i;
    return 2;
}

static int log_vprintf(LV2_Log_Handle handle, LV2_URID type, const char *fmt, va_list ap) {
    gh_lv2_log *log = handle;
    uint64_t slot = __atomic_load_n(&log->reserved, __ATOMIC_RELAXED);
    do {
        if (slot - __atomic_load_n(&log->read, __ATOMIC_ACQUIRE) >= SLOTS) {
            __atomic_fetch_add(&log->dropped, 1, __ATOMIC_RELAXED);
            return 0;
        }
    } while (!__atomic_compare_exchange_n(&log->reserved, &slot, slot + 1, 1, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED));
    size_t i = slot % SLOTS;
    int n = vsnprintf(log->text[i], SLOT_SIZE, fmt, ap);
    log->level[i] = level_of(log, type);
    __atomic_store_n(&log->ready[i], 1, __ATOMIC_RELEASE);
    return n;
}

static int log_printf(LV2_Log_Handle handle, LV2_URID type, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = log_vprintf(handle, type, fmt, ap);
    va_end(ap);
    return n;
}

gh_lv2_log *gh_lv2_log_create(uint32_t error_urid, uint32_t warning_urid, uint32_t note_urid, uint32_t trace_urid) {
    gh_lv2_log *log = calloc(1, sizeof(*log));
    if (!log) return NULL;
    log->feature.handle = log;
    log->feature.printf = log_printf;
    log->feature.vprintf = log_vprintf;
    log->urids[0] = error_urid; log->urids[1] = warning_urid; log->urids[2] = note_urid; log->urids[3] = trace_urid;
    return log;
}

void gh_lv2_log_destroy(gh_lv2_log *log) { free(log); }

void *gh_lv2_log_feature_data(gh_lv2_log *log) { return &log->feature; }

uint64_t gh_lv2_log_dropped(gh_lv2_log *log) { return __atomic_load_n(&log->dropped, __ATOMIC_RELAXED); }

int gh_lv2_log_next(gh_lv2_log *log, char *text, size_t size) {
    size_t i = log->read % SLOTS;
    if (log->read == __atomic_load_n(&log->reserved, __ATOMIC_ACQUIRE)) return -1;
    if (!__atomic_load_n(&log->ready[i], __ATOMIC_ACQUIRE)) return -1;
    snprintf(text, size, "%s", log->text[i]);
    int level = log->level[i];
    __atomic_store_n(&log->ready[i], 0, __ATOMIC_RELAXED);
    __atomic_store_n(&log->read, log->read + 1, __ATOMIC_RELEASE);
    return level;
}
