/* Test fixture: a mono gain whose new value only takes effect after a round trip through the LV2 worker. */
#include <lv2/core/lv2.h>
#include <lv2/worker/worker.h>
#include <lv2/urid/urid.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const float *gain;
    const float *in;
    float *out;
    LV2_Worker_Schedule *schedule;
    float requested;
    float applied;
} Plugin;

static LV2_Handle instantiate(const LV2_Descriptor *d, double rate, const char *path, const LV2_Feature *const *features) {
    (void)d; (void)rate; (void)path;
    Plugin *p = calloc(1, sizeof(Plugin));
    for (int i = 0; features[i]; i++)
        if (!strcmp(features[i]->URI, LV2_WORKER__schedule)) p->schedule = features[i]->data;
    if (!p->schedule) { free(p); return NULL; }
    p->requested = 1.0f;
    p->applied = 1.0f;
    return p;
}

static void connect_port(LV2_Handle h, uint32_t port, void *data) {
    Plugin *p = h;
    if (port == 0) p->gain = data; else if (port == 1) p->in = data; else p->out = data;
}

static void run(LV2_Handle h, uint32_t n) {
    Plugin *p = h;
    if (*p->gain != p->requested) {
        p->requested = *p->gain;
        p->schedule->schedule_work(p->schedule->handle, sizeof(float), &p->requested);
    }
    for (uint32_t i = 0; i < n; i++) p->out[i] = p->in[i] * p->applied;
}

static LV2_Worker_Status work(LV2_Handle h, LV2_Worker_Respond_Function respond, LV2_Worker_Respond_Handle rh,
                              uint32_t size, const void *data) {
    (void)h;
    return respond(rh, size, data);
}

static LV2_Worker_Status work_response(LV2_Handle h, uint32_t size, const void *data) {
    Plugin *p = h;
    if (size == sizeof(float)) memcpy(&p->applied, data, sizeof(float));
    return LV2_WORKER_SUCCESS;
}

static const void *extension_data(const char *uri) {
    static const LV2_Worker_Interface worker = { work, work_response, NULL };
    return strcmp(uri, LV2_WORKER__interface) ? NULL : &worker;
}

static void cleanup(LV2_Handle h) { free(h); }

static const LV2_Descriptor descriptor = {
    "urn:graphhost:test:worker-gain", instantiate, connect_port, NULL, run, NULL, cleanup, extension_data
};

LV2_SYMBOL_EXPORT const LV2_Descriptor *lv2_descriptor(uint32_t index) { return index == 0 ? &descriptor : NULL; }
