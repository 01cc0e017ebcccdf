/* Test fixture: a mono gain whose value is read from a text file named by a path property (patch:Set of
 * file-gain#gainFile), loaded through the worker and applied in work_response, as convolvers load IR files. Once
 * applied, and when asked by a patch:Get, the gain is reported on the notify port as a patch:Set of the readable
 * property file-gain#gain. */
#include <lv2/atom/atom.h>
#include <lv2/atom/forge.h>
#include <lv2/atom/util.h>
#include <lv2/core/lv2.h>
#include <lv2/patch/patch.h>
#include <lv2/urid/urid.h>
#include <lv2/worker/worker.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GAIN_FILE "urn:graphhost:test:file-gain#gainFile"
#define GAIN "urn:graphhost:test:file-gain#gain"

typedef struct {
    const LV2_Atom_Sequence *control;
    LV2_Atom_Sequence *notify;
    LV2_Atom_Forge forge;
    LV2_URID gain_urid, atom_float;
    int report;
    const float *in;
    float *out;
    LV2_Worker_Schedule *schedule;
    LV2_URID object, path, set, get, property, value, gain_file;
    float gain;
} Plugin;

static LV2_Handle instantiate(const LV2_Descriptor *d, double rate, const char *bundle, const LV2_Feature *const *features) {
    (void)d; (void)rate; (void)bundle;
    LV2_URID_Map *map = NULL;
    Plugin *p = calloc(1, sizeof(Plugin));
    for (int i = 0; features[i]; i++) {
        if (!strcmp(features[i]->URI, LV2_URID__map)) map = features[i]->data;
        if (!strcmp(features[i]->URI, LV2_WORKER__schedule)) p->schedule = features[i]->data;
    }
    if (!map || !p->schedule) { free(p); return NULL; }
    p->object = map->map(map->handle, LV2_ATOM__Object);
    p->path = map->map(map->handle, LV2_ATOM__Path);
    p->set = map->map(map->handle, LV2_PATCH__Set);
    p->get = map->map(map->handle, LV2_PATCH__Get);
    p->property = map->map(map->handle, LV2_PATCH__property);
    p->value = map->map(map->handle, LV2_PATCH__value);
    p->gain_file = map->map(map->handle, GAIN_FILE);
    p->gain_urid = map->map(map->handle, GAIN);
    p->atom_float = map->map(map->handle, LV2_ATOM__Float);
    lv2_atom_forge_init(&p->forge, map);
    p->gain = 1.0f;
    return p;
}

static void connect_port(LV2_Handle h, uint32_t port, void *data) {
    Plugin *p = h;
    if (port == 0) p->control = data; else if (port == 1) p->in = data; else if (port == 2) p->out = data; else p->notify = data;
}

static void run(LV2_Handle h, uint32_t n) {
    Plugin *p = h;
    LV2_ATOM_SEQUENCE_FOREACH(p->control, ev) {
        if (ev->body.type != p->object) continue;
        const LV2_Atom_Object *obj = (const LV2_Atom_Object *)&ev->body;
        if (obj->body.otype == p->get) p->report = 1;
        if (obj->body.otype != p->set) continue;
        const LV2_Atom *property = NULL, *value = NULL;
        lv2_atom_object_get(obj, p->property, &property, p->value, &value, 0);
        if (property && value && ((const LV2_Atom_URID *)property)->body == p->gain_file && value->type == p->path)
            p->schedule->schedule_work(p->schedule->handle, value->size, LV2_ATOM_BODY_CONST(value));
    }
    for (uint32_t i = 0; i < n; i++) p->out[i] = p->in[i] * p->gain;
    if (!p->notify) return;
    LV2_Atom_Forge_Frame sequence, object;
    lv2_atom_forge_set_buffer(&p->forge, (uint8_t *)p->notify, p->notify->atom.size);
    lv2_atom_forge_sequence_head(&p->forge, &sequence, 0);
    if (p->report) {
        p->report = 0;
        lv2_atom_forge_frame_time(&p->forge, 0);
        lv2_atom_forge_object(&p->forge, &object, 0, p->set);
        lv2_atom_forge_key(&p->forge, p->property);
        lv2_atom_forge_urid(&p->forge, p->gain_urid);
        lv2_atom_forge_key(&p->forge, p->value);
        lv2_atom_forge_float(&p->forge, p->gain);
        lv2_atom_forge_pop(&p->forge, &object);
    }
    lv2_atom_forge_pop(&p->forge, &sequence);
}

static LV2_Worker_Status work(LV2_Handle h, LV2_Worker_Respond_Function respond, LV2_Worker_Respond_Handle handle,
                              uint32_t size, const void *data) {
    (void)h; (void)size;
    FILE *f = fopen((const char *)data, "r");
    float gain;
    if (!f) return LV2_WORKER_ERR_UNKNOWN;
    int read = fscanf(f, "%f", &gain);
    fclose(f);
    if (read != 1) return LV2_WORKER_ERR_UNKNOWN;
    return respond(handle, sizeof(gain), &gain);
}

static LV2_Worker_Status work_response(LV2_Handle h, uint32_t size, const void *data) {
    Plugin *p = h;
    if (size == sizeof(float)) { memcpy(&p->gain, data, sizeof(float)); p->report = 1; }
    return LV2_WORKER_SUCCESS;
}

static const void *extension_data(const char *uri) {
    static const LV2_Worker_Interface worker = { work, work_response, NULL };
    return strcmp(uri, LV2_WORKER__interface) ? NULL : &worker;
}

static void cleanup(LV2_Handle h) { free(h); }

static const LV2_Descriptor descriptor = {
    "urn:graphhost:test:file-gain", instantiate, connect_port, NULL, run, NULL, cleanup, extension_data
};

LV2_SYMBOL_EXPORT const LV2_Descriptor *lv2_descriptor(uint32_t index) { return index == 0 ? &descriptor : NULL; }
