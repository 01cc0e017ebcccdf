#ifndef GH_LV2_GLUE_H
#define GH_LV2_GLUE_H
#include <stdint.h>
#include <stddef.h>

/// The LV2 log feature (printf-style callbacks need C). Messages are formatted into a fixed,
/// lock-free ring of slots, safe to call from the render thread; the control world drains it.
typedef struct gh_lv2_log gh_lv2_log;

/// Creates the log; `error_urid`, `warning_urid`, `note_urid`, `trace_urid` classify messages.
gh_lv2_log *gh_lv2_log_create(uint32_t error_urid, uint32_t warning_urid, uint32_t note_urid, uint32_t trace_urid);
void gh_lv2_log_destroy(gh_lv2_log *log);
/// The LV2_Log_Log struct to pass as the feature's data.
void *gh_lv2_log_feature_data(gh_lv2_log *log);
/// Copies the oldest message into `text` (NUL-terminated); returns its level (0 error, 1 warning, 2 note, 3 trace)
/// or -1 when none is waiting.
int gh_lv2_log_next(gh_lv2_log *log, char *text, size_t size);
/// Messages dropped so far because the ring was full.
uint64_t gh_lv2_log_dropped(gh_lv2_log *log);

#endif
