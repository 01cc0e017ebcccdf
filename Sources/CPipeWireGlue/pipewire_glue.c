#include "pipewire_glue.h"
#include <spa/control/control.h>
#include <spa/param/buffers.h>
#include <spa/pod/iter.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

uint32_t gh_build_formats(uint8_t *buffer, uint32_t size, uint32_t rate, uint32_t channels,
                                 const struct spa_pod **params) {
    struct spa_pod_builder b = SPA_POD_BUILDER_INIT(buffer, size);
    enum spa_audio_format formats[2] = { SPA_AUDIO_FORMAT_F32P, SPA_AUDIO_FORMAT_F32 };
    for (uint32_t i = 0; i < 2; i++) {
        struct spa_audio_info_raw info = { 0 };
        info.format = formats[i];
        info.rate = rate;
        info.channels = channels;
        /* The graph's layouts (ChannelLayout.standard); PipeWire's RL/RR/RC are the back channels. */
        static const uint32_t layouts[9][8] = {
            { 0 },
            { SPA_AUDIO_CHANNEL_MONO },
            { SPA_AUDIO_CHANNEL_FL, SPA_AUDIO_CHANNEL_FR },
            { SPA_AUDIO_CHANNEL_FL, SPA_AUDIO_CHANNEL_FR, SPA_AUDIO_CHANNEL_FC },
            { SPA_AUDIO_CHANNEL_FL, SPA_AUDIO_CHANNEL_FR, SPA_AUDIO_CHANNEL_RL, SPA_AUDIO_CHANNEL_RR },
            { SPA_AUDIO_CHANNEL_FL, SPA_AUDIO_CHANNEL_FR, SPA_AUDIO_CHANNEL_FC, SPA_AUDIO_CHANNEL_RL, SPA_AUDIO_CHANNEL_RR },
            { SPA_AUDIO_CHANNEL_FL, SPA_AUDIO_CHANNEL_FR, SPA_AUDIO_CHANNEL_FC, SPA_AUDIO_CHANNEL_LFE, SPA_AUDIO_CHANNEL_RL,
              SPA_AUDIO_CHANNEL_RR },
            { SPA_AUDIO_CHANNEL_FL, SPA_AUDIO_CHANNEL_FR, SPA_AUDIO_CHANNEL_FC, SPA_AUDIO_CHANNEL_LFE, SPA_AUDIO_CHANNEL_RC,
              SPA_AUDIO_CHANNEL_SL, SPA_AUDIO_CHANNEL_SR },
            { SPA_AUDIO_CHANNEL_FL, SPA_AUDIO_CHANNEL_FR, SPA_AUDIO_CHANNEL_FC, SPA_AUDIO_CHANNEL_LFE, SPA_AUDIO_CHANNEL_RL,
              SPA_AUDIO_CHANNEL_RR, SPA_AUDIO_CHANNEL_SL, SPA_AUDIO_CHANNEL_SR },
        };
        for (uint32_t c = 0; c < channels && c < SPA_AUDIO_MAX_CHANNELS; c++)
            info.position[c] = channels < 9 ? layouts[channels][c] : SPA_AUDIO_CHANNEL_AUX0 + c;
        params[i] = spa_format_audio_raw_build(&b, SPA_PARAM_EnumFormat, &info);
    }
    return 2;
}

const struct spa_pod *gh_build_buffers(uint8_t *buffer, uint32_t size, uint32_t max_frames, uint32_t stride,
                                              uint32_t blocks) {
    struct spa_pod_builder b = SPA_POD_BUILDER_INIT(buffer, size);
    return spa_pod_builder_add_object(&b,
        SPA_TYPE_OBJECT_ParamBuffers, SPA_PARAM_Buffers,
        SPA_PARAM_BUFFERS_buffers, SPA_POD_CHOICE_RANGE_Int(2, 2, 8),
        SPA_PARAM_BUFFERS_blocks, SPA_POD_Int(blocks),
        SPA_PARAM_BUFFERS_size, SPA_POD_CHOICE_RANGE_Int(max_frames * stride, 64 * stride, INT32_MAX),
        SPA_PARAM_BUFFERS_stride, SPA_POD_Int(stride));
}

int gh_parse_format(const struct spa_pod *param, uint32_t *rate, uint32_t *channels, int *planar) {
    uint32_t media_type, media_subtype;
    if (param == NULL || spa_format_parse(param, &media_type, &media_subtype) < 0) return 0;
    if (media_type != SPA_MEDIA_TYPE_audio || media_subtype != SPA_MEDIA_SUBTYPE_raw) return 0;
    struct spa_audio_info_raw info = { 0 };
    if (spa_format_audio_raw_parse(param, &info) < 0) return 0;
    if (info.format != SPA_AUDIO_FORMAT_F32P && info.format != SPA_AUDIO_FORMAT_F32) return 0;
    *rate = info.rate;
    *channels = info.channels;
    *planar = info.format == SPA_AUDIO_FORMAT_F32P;
    return 1;
}

void gh_core_add_listener(struct pw_core *core, struct spa_hook *listener,
                                 const struct pw_core_events *events, void *data) {
    pw_core_add_listener(core, listener, events, data);
}

struct node_search {
    const char *target;
    struct pw_thread_loop *loop;
    int pending;
    int found;
    int done;
};

static void search_global(void *data, uint32_t id, uint32_t permissions, const char *type, uint32_t version,
                          const struct spa_dict *props) {
    struct node_search *s = data;
    (void)permissions; (void)version;
    if (type == NULL || strcmp(type, PW_TYPE_INTERFACE_Node) != 0 || props == NULL) return;
    const char *name = spa_dict_lookup(props, PW_KEY_NODE_NAME);
    const char *serial = spa_dict_lookup(props, PW_KEY_OBJECT_SERIAL);
    char idtext[16];
    snprintf(idtext, sizeof(idtext), "%u", id);
    if ((name && strcmp(name, s->target) == 0) || (serial && strcmp(serial, s->target) == 0) || strcmp(idtext, s->target) == 0)
        s->found = 1;
}

static void search_done(void *data, uint32_t id, int seq) {
    struct node_search *s = data;
    if (id == PW_ID_CORE && seq == s->pending) {
        s->done = 1;
        pw_thread_loop_signal(s->loop, false);
    }
}

int gh_find_node(struct pw_thread_loop *loop, struct pw_core *core, const char *target, int timeout_ms) {
    struct node_search s = { .target = target, .loop = loop };
    static const struct pw_registry_events registry_events = { PW_VERSION_REGISTRY_EVENTS, .global = search_global };
    static const struct pw_core_events core_events = { PW_VERSION_CORE_EVENTS, .done = search_done };
    struct spa_hook registry_listener = { 0 }, core_listener = { 0 };
    struct pw_registry *registry = pw_core_get_registry(core, PW_VERSION_REGISTRY, 0);
    if (registry == NULL) return -1;
    pw_registry_add_listener(registry, &registry_listener, &registry_events, &s);
    pw_core_add_listener(core, &core_listener, &core_events, &s);
    s.pending = pw_core_sync(core, PW_ID_CORE, 0);
    int waited = 0;
    while (!s.done && waited < timeout_ms) {
        pw_thread_loop_timed_wait(loop, 1);
        waited += 1000;
    }
    spa_hook_remove(&core_listener);
    spa_hook_remove(&registry_listener);
    pw_proxy_destroy((struct pw_proxy *)registry);
    return s.done ? s.found : -1;
}

const struct spa_pod *gh_build_midi_format(uint8_t *buffer, uint32_t size) {
    struct spa_pod_builder b = SPA_POD_BUILDER_INIT(buffer, size);
    return spa_pod_builder_add_object(&b,
        SPA_TYPE_OBJECT_Format, SPA_PARAM_EnumFormat,
        SPA_FORMAT_mediaType, SPA_POD_Id(SPA_MEDIA_TYPE_application),
        SPA_FORMAT_mediaSubtype, SPA_POD_Id(SPA_MEDIA_SUBTYPE_control));
}

void gh_midi_input_process(struct pw_stream *stream, gh_midi_receive receive, void *target) {
    struct pw_buffer *b = pw_stream_dequeue_buffer(stream);
    if (b == NULL) return;
    struct spa_data *d = &b->buffer->datas[0];
    if (d->data != NULL && d->chunk != NULL) {
        struct spa_pod *pod = spa_pod_from_data(d->data, d->maxsize, d->chunk->offset, d->chunk->size);
        if (pod != NULL && spa_pod_is_sequence(pod)) {
            struct spa_pod_control *c;
            SPA_POD_SEQUENCE_FOREACH((struct spa_pod_sequence *)pod, c) {
                if (c->type != SPA_CONTROL_Midi) continue;
                receive(target, c->offset, SPA_POD_BODY(&c->value), SPA_POD_BODY_SIZE(&c->value));
            }
        }
    }
    pw_stream_queue_buffer(stream, b);
}

/* A parameter's value as its PropInfo type says: a float, an int (rounded) or a bool. */
static void gh_add_param_value(struct spa_pod_builder *b, int kind, double value) {
    switch (kind) {
    case GH_PARAM_BOOL: spa_pod_builder_bool(b, value > 0.5); break;
    case GH_PARAM_INT: spa_pod_builder_int(b, (int32_t)lround(value)); break;
    default: spa_pod_builder_float(b, (float)value); break;
    }
}

uint32_t gh_build_param_props(uint8_t *buffer, uint32_t size, const char *const *names,
                                     const char *const *descriptions, const double *values, const double *mins,
                                     const double *maxs, const int *kinds, uint32_t count,
                                     const struct spa_pod **params, uint32_t max_params) {
    struct spa_pod_builder b = SPA_POD_BUILDER_INIT(buffer, size);
    struct spa_pod_frame f[2];
    uint32_t n = 0;
    if (count + 1 > max_params) return 0;
    /* The buffer is fixed (no overflow callback), so a pod's address is known before it is written. */
    for (uint32_t i = 0; i < count; i++) {
        params[n++] = (const struct spa_pod *)(buffer + b.state.offset);
        spa_pod_builder_push_object(&b, &f[0], SPA_TYPE_OBJECT_PropInfo, SPA_PARAM_PropInfo);
        spa_pod_builder_add(&b, SPA_PROP_INFO_name, SPA_POD_String(names[i]),
                            SPA_PROP_INFO_description, SPA_POD_String(descriptions[i]), 0);
        spa_pod_builder_prop(&b, SPA_PROP_INFO_type, 0);
        if (kinds[i] == GH_PARAM_BOOL) {
            gh_add_param_value(&b, kinds[i], values[i]);
        } else {
            spa_pod_builder_push_choice(&b, &f[1], SPA_CHOICE_Range, 0);
            gh_add_param_value(&b, kinds[i], values[i]);
            gh_add_param_value(&b, kinds[i], mins[i]);
            gh_add_param_value(&b, kinds[i], maxs[i]);
            spa_pod_builder_pop(&b, &f[1]);
        }
        spa_pod_builder_prop(&b, SPA_PROP_INFO_params, 0);
        spa_pod_builder_bool(&b, true);
        spa_pod_builder_pop(&b, &f[0]);
    }
    params[n++] = (const struct spa_pod *)(buffer + b.state.offset);
    spa_pod_builder_push_object(&b, &f[0], SPA_TYPE_OBJECT_Props, SPA_PARAM_Props);
    spa_pod_builder_prop(&b, SPA_PROP_params, 0);
    spa_pod_builder_push_struct(&b, &f[1]);
    for (uint32_t i = 0; i < count; i++) {
        spa_pod_builder_string(&b, names[i]);
        gh_add_param_value(&b, kinds[i], values[i]);
    }
    spa_pod_builder_pop(&b, &f[1]);
    spa_pod_builder_pop(&b, &f[0]);
    return b.state.offset > size ? 0 : n;
}

int gh_parse_param_props(const struct spa_pod *param, gh_prop_receive receive, void *target) {
    if (param == NULL || !spa_pod_is_object_type(param, SPA_TYPE_OBJECT_Props)) return 0;
    const struct spa_pod_prop *prop = spa_pod_find_prop(param, NULL, SPA_PROP_params);
    if (prop == NULL || !spa_pod_is_struct(&prop->value)) return 0;
    struct spa_pod_parser p;
    struct spa_pod_frame f;
    spa_pod_parser_pod(&p, &prop->value);
    if (spa_pod_parser_push_struct(&p, &f) < 0) return 0;
    int found = 0;
    while (1) {
        const char *name;
        struct spa_pod *value;
        if (spa_pod_parser_get_string(&p, &name) < 0) break;
        if (spa_pod_parser_get_pod(&p, &value) < 0) break;
        double number = 0;
        int valid = 1;
        float fv; double dv; int32_t iv; int64_t lv; bool bv;
        if (spa_pod_get_float(value, &fv) == 0) number = fv;
        else if (spa_pod_get_double(value, &dv) == 0) number = dv;
        else if (spa_pod_get_int(value, &iv) == 0) number = iv;
        else if (spa_pod_get_long(value, &lv) == 0) number = (double)lv;
        else if (spa_pod_get_bool(value, &bv) == 0) number = bv ? 1 : 0;
        else valid = 0;
        receive(target, name, number, valid);
        found++;
    }
    return found;
}

#include <pipewire/impl-module.h>
#include <pipewire/extensions/profiler.h>
#include <spa/param/profiler.h>
#include <stdlib.h>

struct gh_profiler {
    struct pw_core *core;
    struct pw_registry *registry;
    struct spa_hook registry_listener;
    struct spa_hook core_listener;
    struct pw_proxy *proxy;
    struct spa_hook profiler_listener;
    int pending;
    int state;
    uint32_t node_id;
    struct gh_profiler_totals totals;
};

int gh_profiler_load_protocol(struct pw_context *context) {
    return pw_context_load_module(context, PW_EXTENSION_MODULE_PROFILER, NULL, NULL) != NULL ? 0 : -errno;
}

void *gh_load_module(struct pw_context *context, const char *name, const char *args) {
    return pw_context_load_module(context, name, args, NULL);
}

void gh_unload_module(void *module) { pw_impl_module_destroy(module); }

/* One follower or driver block: Struct(Int id, String name, Long prev_signal, Long signal, Long awake, Long finish,
   Int status, Fraction latency). */
static void profiler_block(struct gh_profiler *p, const struct spa_pod *pod, uint64_t period_ns) {
    int32_t id = 0, status = 0;
    const char *name = NULL;
    int64_t prev_signal = 0, signal = 0, awake = 0, finish = 0;
    if (spa_pod_parse_struct(pod, SPA_POD_Int(&id), SPA_POD_String(&name), SPA_POD_Long(&prev_signal),
            SPA_POD_Long(&signal), SPA_POD_Long(&awake), SPA_POD_Long(&finish), SPA_POD_Int(&status)) < 0)
        return;
    /* Status 3 is PW_NODE_ACTIVATION_FINISHED: the cycle's times are complete. */
    if ((uint32_t)id != p->node_id || status != 3 || awake <= 0 || finish < awake) return;
    uint64_t busy = (uint64_t)(finish - awake);
    p->totals.cycles++;
    p->totals.busy_ns += busy;
    if (busy > p->totals.max_busy_ns) p->totals.max_busy_ns = busy;
    p->totals.period_ns += period_ns;
}

static void profiler_profile(void *data, const struct spa_pod *pod) {
    struct gh_profiler *p = data;
    if (p->node_id == SPA_ID_INVALID || !spa_pod_is_struct(pod)) return;
    struct spa_pod *o;
    SPA_POD_STRUCT_FOREACH(pod, o) {
        if (!spa_pod_is_object_type(o, SPA_TYPE_OBJECT_Profiler)) continue;
        uint64_t period_ns = 0;
        struct spa_pod_prop *prop;
        SPA_POD_OBJECT_FOREACH((struct spa_pod_object *)o, prop) {
            if (prop->key == SPA_PROFILER_clock) {
                int32_t flags = 0, clock_id = 0;
                const char *clock_name = NULL;
                int64_t nsec = 0, position = 0, duration = 0;
                struct spa_fraction rate = { 0, 0 };
                if (spa_pod_parse_struct(&prop->value, SPA_POD_Int(&flags), SPA_POD_Int(&clock_id),
                        SPA_POD_String(&clock_name), SPA_POD_Long(&nsec), SPA_POD_Fraction(&rate),
                        SPA_POD_Long(&position), SPA_POD_Long(&duration)) >= 0 && rate.denom > 0)
                    period_ns = (uint64_t)duration * 1000000000ull * rate.num / rate.denom;
            } else if (prop->key == SPA_PROFILER_driverBlock || prop->key == SPA_PROFILER_followerBlock) {
                profiler_block(p, &prop->value, period_ns);
            }
        }
    }
}

static const struct pw_profiler_events gh_profiler_events = {
    PW_VERSION_PROFILER_EVENTS,
    .profile = profiler_profile,
};

static void profiler_global(void *data, uint32_t id, uint32_t permissions, const char *type, uint32_t version,
                            const struct spa_dict *props) {
    struct gh_profiler *p = data;
    if (p->proxy != NULL || strcmp(type, PW_TYPE_INTERFACE_Profiler) != 0) return;
    p->proxy = pw_registry_bind(p->registry, id, type, PW_VERSION_PROFILER, 0);
    if (p->proxy == NULL) return;
    pw_proxy_add_object_listener(p->proxy, &p->profiler_listener, &gh_profiler_events, p);
    p->state = 1;
}

static void profiler_done(void *data, uint32_t id, int seq) {
    struct gh_profiler *p = data;
    if (id == PW_ID_CORE && seq == p->pending && p->state == 0) p->state = -1;
}

static const struct pw_registry_events gh_profiler_registry_events = {
    PW_VERSION_REGISTRY_EVENTS,
    .global = profiler_global,
};

static const struct pw_core_events gh_profiler_core_events = {
    PW_VERSION_CORE_EVENTS,
    .done = profiler_done,
};

struct gh_profiler *gh_profiler_new(struct pw_core *core) {
    struct gh_profiler *p = calloc(1, sizeof(*p));
    if (p == NULL) return NULL;
    p->core = core;
    p->node_id = SPA_ID_INVALID;
    p->registry = pw_core_get_registry(core, PW_VERSION_REGISTRY, 0);
    if (p->registry == NULL) {
        free(p);
        return NULL;
    }
    pw_registry_add_listener(p->registry, &p->registry_listener, &gh_profiler_registry_events, p);
    pw_core_add_listener(core, &p->core_listener, &gh_profiler_core_events, p);
    p->pending = pw_core_sync(core, PW_ID_CORE, 0);
    return p;
}

int gh_profiler_state(const struct gh_profiler *profiler) { return profiler->state; }

void gh_profiler_set_node(struct gh_profiler *profiler, uint32_t node_id) {
    if (profiler->node_id == node_id) return;
    profiler->node_id = node_id;
    memset(&profiler->totals, 0, sizeof(profiler->totals));
}

void gh_profiler_take(struct gh_profiler *profiler, struct gh_profiler_totals *totals) {
    *totals = profiler->totals;
    memset(&profiler->totals, 0, sizeof(profiler->totals));
}

void gh_profiler_destroy(struct gh_profiler *profiler) {
    spa_hook_remove(&profiler->core_listener);
    if (profiler->proxy != NULL) {
        spa_hook_remove(&profiler->profiler_listener);
        pw_proxy_destroy(profiler->proxy);
    }
    spa_hook_remove(&profiler->registry_listener);
    pw_proxy_destroy((struct pw_proxy *)profiler->registry);
    free(profiler);
}
