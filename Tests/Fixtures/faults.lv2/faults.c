/* Test fixtures for graphhost's fault handling, eight mono plugins in one library:
 * nan (writes NaN and Inf once its "poison" control is 1), denormal (computes denormal output),
 * fail (instantiate returns NULL), slow (sleeps "delay" milliseconds in every run) and burst (multiplies its
 * input by a million, +120 dB, while its "burst" control is 1: finite, and far too loud) and freewheel (passes its
 * input while its lv2:freeWheeling port says it runs offline, else silence) and crash (halves its input, then after
 * "after" runs does what "fault" says: 1 dereferences a bad pointer, 2 aborts, 3 hangs for ever, 4 writes past its
 * output buffer until it faults) and abort (aborts in instantiate), and stateful (fades its halved input in over its
 * first 200 runs, a count it saves and restores through the state interface, and faults as crash does, counting the
 * runs of this instance). */
#include <lv2/core/lv2.h>
#include <lv2/state/state.h>
#include <lv2/urid/urid.h>
#include <string.h>
#include <math.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    const float *in;
    float *out;
    const float *control;
    const float *after;
    unsigned runs;
    int kind;
    int32_t saved_runs;
    LV2_URID runs_key, int_type;
} Plugin;

static LV2_Handle instantiate(const LV2_Descriptor *d, double rate, const char *path, const LV2_Feature *const *f) {
    (void)rate; (void)path; (void)f;
    int kind = (int)(size_t)d->extension_data(NULL);
    if (kind == 2) return NULL;
    if (kind == 7) abort();
    Plugin *p = calloc(1, sizeof(Plugin));
    p->kind = kind;
    for (int i = 0; f && f[i]; i++) {
        if (strcmp(f[i]->URI, LV2_URID__map) == 0) {
            LV2_URID_Map *map = f[i]->data;
            p->runs_key = map->map(map->handle, "urn:graphhost:test:runs");
            p->int_type = map->map(map->handle, "http://lv2plug.in/ns/ext/atom#Int");
        }
    }
    return p;
}

static void connect_port(LV2_Handle h, uint32_t port, void *data) {
    Plugin *p = h;
    if (port == 0) p->in = data; else if (port == 1) p->out = data; else if (port == 2) p->control = data;
    else p->after = data;
}

static volatile float tiny = 1e-30f;

static void run(LV2_Handle h, uint32_t n) {
    Plugin *p = h;
    float c = p->control ? *p->control : 0;
    for (uint32_t i = 0; i < n; i++) p->out[i] = p->in[i];
    if (p->kind == 0 && c >= 1 && n > 1) { p->out[0] = NAN; p->out[n / 2] = INFINITY; }
    if (p->kind == 1) for (uint32_t i = 0; i < n; i++) p->out[i] = p->in[i] * tiny * tiny;
    if (p->kind == 4 && c >= 1) for (uint32_t i = 0; i < n; i++) p->out[i] = p->in[i] * 1e6f;
    if (p->kind == 5 && c <= 0) for (uint32_t i = 0; i < n; i++) p->out[i] = 0;
    if (p->kind == 8) {
        float gain = p->saved_runs >= 200 ? 0.5f : 0.5f * (float)p->saved_runs / 200;
        for (uint32_t i = 0; i < n; i++) p->out[i] = gain * p->in[i];
        p->saved_runs++;
    }
    if (p->kind == 6 || p->kind == 8) {
        if (p->kind == 6) for (uint32_t i = 0; i < n; i++) p->out[i] = 0.5f * p->in[i];
        if (c >= 1 && p->after && ++p->runs > (unsigned)*p->after) {
            if (c < 2) *(volatile int *)(size_t)8 = 1;
            if (c < 3) abort();
            if (c < 4) for (;;) pause();
            for (size_t i = 0;; i += 1024) ((volatile float *)p->out)[i] = 1e30f;
        }
    }
    if (p->kind == 3 && c > 0) {
        struct timespec t = { 0, (long)(c * 1e6) };
        nanosleep(&t, NULL);
    }
}

static void cleanup(LV2_Handle h) { free(h); }

static LV2_State_Status save(LV2_Handle h, LV2_State_Store_Function store, LV2_State_Handle handle, uint32_t flags,
                             const LV2_Feature *const *features) {
    (void)flags; (void)features;
    Plugin *p = h;
    return store(handle, p->runs_key, &p->saved_runs, sizeof(int32_t), p->int_type,
                 LV2_STATE_IS_POD | LV2_STATE_IS_PORTABLE);
}

static LV2_State_Status restore(LV2_Handle h, LV2_State_Retrieve_Function retrieve, LV2_State_Handle handle,
                                uint32_t flags, const LV2_Feature *const *features) {
    (void)flags; (void)features;
    Plugin *p = h;
    size_t size = 0;
    uint32_t type = 0, value_flags = 0;
    const void *value = retrieve(handle, p->runs_key, &size, &type, &value_flags);
    if (value && size == sizeof(int32_t) && type == p->int_type) p->saved_runs = *(const int32_t *)value;
    return LV2_STATE_SUCCESS;
}

static const LV2_State_Interface state_interface = { save, restore };
/* extension_data(NULL) returns the plugin's kind: a way for instantiate to tell them apart. */
static const void *kind0(const char *u) { return u ? NULL : (const void *)0; }
static const void *kind1(const char *u) { return u ? NULL : (const void *)1; }
static const void *kind2(const char *u) { return u ? NULL : (const void *)2; }
static const void *kind3(const char *u) { return u ? NULL : (const void *)3; }
static const void *kind4(const char *u) { return u ? NULL : (const void *)4; }
static const void *kind5(const char *u) { return u ? NULL : (const void *)5; }
static const void *kind6(const char *u) { return u ? NULL : (const void *)6; }
static const void *kind7(const char *u) { return u ? NULL : (const void *)7; }
static const void *kind8(const char *u) {
    return !u ? (const void *)8 : strcmp(u, LV2_STATE__interface) == 0 ? &state_interface : NULL;
}

static const LV2_Descriptor descriptors[] = {
    { "urn:graphhost:test:nan", instantiate, connect_port, NULL, run, NULL, cleanup, kind0 },
    { "urn:graphhost:test:denormal", instantiate, connect_port, NULL, run, NULL, cleanup, kind1 },
    { "urn:graphhost:test:fail", instantiate, connect_port, NULL, run, NULL, cleanup, kind2 },
    { "urn:graphhost:test:slow", instantiate, connect_port, NULL, run, NULL, cleanup, kind3 },
    { "urn:graphhost:test:burst", instantiate, connect_port, NULL, run, NULL, cleanup, kind4 },
    { "urn:graphhost:test:freewheel", instantiate, connect_port, NULL, run, NULL, cleanup, kind5 },
    { "urn:graphhost:test:crash", instantiate, connect_port, NULL, run, NULL, cleanup, kind6 },
    { "urn:graphhost:test:abort", instantiate, connect_port, NULL, run, NULL, cleanup, kind7 },
    { "urn:graphhost:test:stateful", instantiate, connect_port, NULL, run, NULL, cleanup, kind8 },
};

LV2_SYMBOL_EXPORT const LV2_Descriptor *lv2_descriptor(uint32_t index) {
    return index < 9 ? &descriptors[index] : NULL;
}
