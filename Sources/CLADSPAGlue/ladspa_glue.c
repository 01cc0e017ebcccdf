#include "ladspa_glue.h"

#include <dlfcn.h>
#include <stdlib.h>

typedef struct {
    const LADSPA_Descriptor *descriptor;
    LADSPA_Handle handle;
} instance;

const LADSPA_Descriptor *gh_ladspa_descriptor(void *library, unsigned long index) {
    LADSPA_Descriptor_Function list = (LADSPA_Descriptor_Function)dlsym(library, "ladspa_descriptor");
    return list ? list(index) : NULL;
}

LV2_Handle gh_ladspa_instantiate(const LADSPA_Descriptor *descriptor, unsigned long rate) {
    LADSPA_Handle handle = descriptor->instantiate(descriptor, rate);
    if (!handle) return NULL;
    instance *made = malloc(sizeof *made);
    if (!made) {
        descriptor->cleanup(handle);
        return NULL;
    }
    made->descriptor = descriptor;
    made->handle = handle;
    return made;
}

static void connect_port(LV2_Handle h, uint32_t port, void *data) {
    instance *i = h;
    i->descriptor->connect_port(i->handle, port, data);
}

static void activate(LV2_Handle h) {
    instance *i = h;
    if (i->descriptor->activate) i->descriptor->activate(i->handle);
}

static void run(LV2_Handle h, uint32_t frames) {
    instance *i = h;
    i->descriptor->run(i->handle, frames);
}

static void deactivate(LV2_Handle h) {
    instance *i = h;
    if (i->descriptor->deactivate) i->descriptor->deactivate(i->handle);
}

static void cleanup(LV2_Handle h) {
    instance *i = h;
    i->descriptor->cleanup(i->handle);
    free(i);
}

static const LV2_Descriptor shim = {
    .URI = "urn:graphhost:ladspa",
    .instantiate = NULL,
    .connect_port = connect_port,
    .activate = activate,
    .run = run,
    .deactivate = deactivate,
    .cleanup = cleanup,
    .extension_data = NULL,
};

const LV2_Descriptor *gh_ladspa_lv2_descriptor(void) { return &shim; }
