/* Test plugins that play the nominal block length they were told (bufsz:nominalBlockLength) as their output's DC
   level, frames / 8192. block-length takes a new one through the options interface; block-length-fixed keeps the
   one given at instantiation; block-length-refusing has the interface but its set() refuses the option (as a plugin
   that supports other options does), so it too keeps the one given at instantiation. */
#include <lv2/core/lv2.h>
#include <lv2/atom/atom.h>
#include <lv2/buf-size/buf-size.h>
#include <lv2/options/options.h>
#include <lv2/urid/urid.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const float *in;
    float *out;
    LV2_URID nominal_key, int_type;
    int nominal;
} Probe;

static void take(Probe *self, const LV2_Options_Option *options) {
    for (; options && options->key; ++options) {
        if (options->key == self->nominal_key && options->type == self->int_type && options->size == sizeof(int32_t)) {
            self->nominal = *(const int32_t *)options->value;
        }
    }
}

static LV2_Handle instantiate(const LV2_Descriptor *d, double rate, const char *path, const LV2_Feature *const *features) {
    const LV2_URID_Map *map = NULL;
    const LV2_Options_Option *options = NULL;
    for (int i = 0; features[i]; ++i) {
        if (!strcmp(features[i]->URI, LV2_URID__map)) map = features[i]->data;
        if (!strcmp(features[i]->URI, LV2_OPTIONS__options)) options = features[i]->data;
    }
    if (!map || !options) return NULL;
    Probe *self = calloc(1, sizeof(Probe));
    self->nominal_key = map->map(map->handle, LV2_BUF_SIZE__nominalBlockLength);
    self->int_type = map->map(map->handle, LV2_ATOM__Int);
    take(self, options);
    return self;
}

static void connect_port(LV2_Handle h, uint32_t port, void *data) {
    Probe *self = h;
    if (port == 0) self->in = data; else self->out = data;
}

static void run(LV2_Handle h, uint32_t frames) {
    Probe *self = h;
    for (uint32_t i = 0; i < frames; ++i) self->out[i] = (float)self->nominal / 8192.0f;
}

static void cleanup(LV2_Handle h) { free(h); }

static uint32_t get(LV2_Handle h, LV2_Options_Option *options) { return LV2_OPTIONS_ERR_UNKNOWN; }

static uint32_t set(LV2_Handle h, const LV2_Options_Option *options) {
    take(h, options);
    return LV2_OPTIONS_SUCCESS;
}

static const void *extension_data(const char *uri) {
    static const LV2_Options_Interface interface = { get, set };
    return strcmp(uri, LV2_OPTIONS__interface) ? NULL : &interface;
}

static uint32_t refuse(LV2_Handle h, const LV2_Options_Option *options) { return LV2_OPTIONS_ERR_BAD_KEY; }

static const void *refusing_extension_data(const char *uri) {
    static const LV2_Options_Interface interface = { get, refuse };
    return strcmp(uri, LV2_OPTIONS__interface) ? NULL : &interface;
}

static const void *no_extension_data(const char *uri) { return NULL; }

static const LV2_Descriptor probe = { "urn:graphhost:test:block-length", instantiate, connect_port, NULL, run, NULL, cleanup, extension_data };
static const LV2_Descriptor fixed = { "urn:graphhost:test:block-length-fixed", instantiate, connect_port, NULL, run, NULL, cleanup, no_extension_data };

static const LV2_Descriptor refusing = { "urn:graphhost:test:block-length-refusing", instantiate, connect_port, NULL, run, NULL, cleanup, refusing_extension_data };

LV2_SYMBOL_EXPORT const LV2_Descriptor *lv2_descriptor(uint32_t index) {
    return index == 0 ? &probe : index == 1 ? &fixed : index == 2 ? &refusing : NULL;
}
