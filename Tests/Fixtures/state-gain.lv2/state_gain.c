/* Test fixture: a mono gain kept in plugin state (not in a control port), restored without thread safety. */
#include <lv2/core/lv2.h>
#include <lv2/state/state.h>
#include <lv2/urid/urid.h>
#include <lv2/atom/atom.h>
#include <stdlib.h>
#include <string.h>

#define GAIN_URI "urn:graphhost:test:gain"

typedef struct {
    const float *in;
    float *out;
    float gain;
    LV2_URID gain_key, float_type;
} Plugin;

static LV2_Handle instantiate(const LV2_Descriptor *d, double rate, const char *path, const LV2_Feature *const *features) {
    (void)d; (void)rate; (void)path;
    LV2_URID_Map *map = NULL;
    for (int i = 0; features[i]; i++) if (!strcmp(features[i]->URI, LV2_URID__map)) map = features[i]->data;
    if (!map) return NULL;
    Plugin *p = calloc(1, sizeof(Plugin));
    p->gain = 1.0f;
    p->gain_key = map->map(map->handle, GAIN_URI);
    p->float_type = map->map(map->handle, LV2_ATOM__Float);
    return p;
}

static void connect_port(LV2_Handle h, uint32_t port, void *data) {
    Plugin *p = h;
    if (port == 0) p->in = data; else p->out = data;
}

static void run(LV2_Handle h, uint32_t n) {
    Plugin *p = h;
    for (uint32_t i = 0; i < n; i++) p->out[i] = p->in[i] * p->gain;
}

static LV2_State_Status save(LV2_Handle h, LV2_State_Store_Function store, LV2_State_Handle sh, uint32_t flags,
                             const LV2_Feature *const *features) {
    (void)flags; (void)features;
    Plugin *p = h;
    return store(sh, p->gain_key, &p->gain, sizeof(float), p->float_type, LV2_STATE_IS_POD | LV2_STATE_IS_PORTABLE);
}

static LV2_State_Status restore(LV2_Handle h, LV2_State_Retrieve_Function retrieve, LV2_State_Handle sh, uint32_t flags,
                                const LV2_Feature *const *features) {
    (void)flags; (void)features;
    Plugin *p = h;
    size_t size; uint32_t type, vflags;
    const void *value = retrieve(sh, p->gain_key, &size, &type, &vflags);
    if (value && size == sizeof(float) && type == p->float_type) memcpy(&p->gain, value, sizeof(float));
    return LV2_STATE_SUCCESS;
}

static const void *extension_data(const char *uri) {
    static const LV2_State_Interface state = { save, restore };
    return strcmp(uri, LV2_STATE__interface) ? NULL : &state;
}

static void cleanup(LV2_Handle h) { free(h); }

static const LV2_Descriptor descriptor = {
    "urn:graphhost:test:state-gain", instantiate, connect_port, NULL, run, NULL, cleanup, extension_data
};

LV2_SYMBOL_EXPORT const LV2_Descriptor *lv2_descriptor(uint32_t index) { return index == 0 ? &descriptor : NULL; }
