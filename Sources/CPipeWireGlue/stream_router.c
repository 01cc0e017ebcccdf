#include "pipewire_glue.h"

#include <pipewire/extensions/metadata.h>
#include <spa/param/route.h>
#include <spa/pod/parser.h>
#include <spa/utils/json.h>
#include <stdlib.h>
#include <string.h>

/// A playback stream the router saw: bound to read its properties, and moved when a rule names a sink.
struct router_stream {
    struct spa_list link;
    struct gh_router *router;
    uint32_t id;
    struct pw_proxy *proxy;
    struct spa_hook listener;
    int decided;
    char *target;
    int applied;
};

/// A subject's target.object in the default metadata before the router set it.
struct router_value {
    struct spa_list link;
    uint32_t subject;
    char *type;
    char *value;
};

/// An Audio/Sink the registry announced: its global properties (node.name, node.description, ...).
struct router_sink {
    struct spa_list link;
    uint32_t id;
    struct pw_properties *props;
};

/// An output route a device reports active (its Route param): the profile device it plays through, and its name and
/// description ("analog-output-headphones", "Headphones").
struct router_route {
    struct spa_list link;
    int device;
    char *name;
    char *description;
};

/// An Audio/Device the registry announced, bound to follow its active routes: they are enumerated again whenever its
/// params change, and the default sink is reported again once the enumeration is done.
struct router_device {
    struct spa_list link;
    struct gh_router *router;
    uint32_t id;
    struct pw_proxy *proxy;
    struct spa_hook listener;
    struct spa_list routes;
    /// The sync that ends the latest enumeration.
    int done_seq;
    int ready;
};

struct gh_router {
    struct pw_thread_loop *loop;
    struct pw_core *core;
    struct pw_registry *registry;
    struct spa_hook registry_listener;
    struct spa_hook core_listener;
    struct pw_proxy *metadata;
    uint32_t metadata_id;
    struct spa_hook metadata_listener;
    int metadata_ready_seq;
    int metadata_ready;
    int restore_seq;
    int restored;
    struct spa_list streams;
    struct spa_list values;
    struct spa_list sinks;
    struct spa_list devices;
    /// The default sink's node.name (default.audio.sink), or NULL.
    char *default_sink;
    gh_router_decide decide;
    gh_router_default_sink default_sink_changed;
    void *data;
};

static const char *const TARGET_KEY = "target.object";

static struct router_value *find_value(struct gh_router *r, uint32_t subject) {
    struct router_value *v;
    spa_list_for_each(v, &r->values, link) if (v->subject == subject) return v;
    return NULL;
}

static struct router_device *find_device(struct gh_router *r, const char *id) {
    struct router_device *d;
    if (id == NULL) return NULL;
    spa_list_for_each(d, &r->devices, link) if (d->id == (uint32_t)atoi(id)) return d;
    return NULL;
}

/// Reports the default sink's properties, with its device's active output route (the one through the sink's profile
/// device, card.profile.device) as device.route.name and device.route.description. While that device's routes are
/// being enumerated nothing is reported: the end of the enumeration reports.
static void report_default_sink(struct gh_router *r) {
    if (!r->default_sink_changed) return;
    if (!r->default_sink) {
        r->default_sink_changed(r->data, NULL);
        return;
    }
    struct router_sink *k;
    spa_list_for_each(k, &r->sinks, link) {
        const char *name = pw_properties_get(k->props, PW_KEY_NODE_NAME);
        if (!name || strcmp(name, r->default_sink) != 0) continue;
        struct router_device *d = find_device(r, pw_properties_get(k->props, PW_KEY_DEVICE_ID));
        if (d && !d->ready) return;
        struct router_route *route = NULL, *candidate;
        if (d) {
            const char *profile_device = pw_properties_get(k->props, "card.profile.device");
            spa_list_for_each(candidate, &d->routes, link) {
                if (profile_device == NULL || candidate->device == atoi(profile_device)) {
                    route = candidate;
                    break;
                }
            }
        }
        if (!route) {
            r->default_sink_changed(r->data, &k->props->dict);
            return;
        }
        struct pw_properties *props = pw_properties_copy(k->props);
        if (!props) return;
        pw_properties_set(props, "device.route.name", route->name);
        pw_properties_set(props, "device.route.description", route->description);
        r->default_sink_changed(r->data, &props->dict);
        pw_properties_free(props);
        return;
    }
}

static void clear_routes(struct router_device *d) {
    struct router_route *route, *next;
    spa_list_for_each_safe(route, next, &d->routes, link) {
        spa_list_remove(&route->link);
        free(route->name);
        free(route->description);
        free(route);
    }
}

static void device_info(void *data, const struct pw_device_info *info) {
    struct router_device *d = data;
    if (!(info->change_mask & PW_DEVICE_CHANGE_MASK_PARAMS)) return;
    clear_routes(d);
    d->ready = 0;
    pw_device_enum_params((struct pw_device *)d->proxy, 0, SPA_PARAM_Route, 0, UINT32_MAX, NULL);
    d->done_seq = pw_core_sync(d->router->core, PW_ID_CORE, 0);
}

static void device_param(void *data, int seq, uint32_t id, uint32_t index, uint32_t next,
                         const struct spa_pod *param) {
    struct router_device *d = data;
    (void)index; (void)next;
    uint32_t direction;
    int device;
    const char *name = NULL, *description = NULL;
    (void)seq;
    if (id != SPA_PARAM_Route || param == NULL) return;
    if (spa_pod_parse_object(param, SPA_TYPE_OBJECT_ParamRoute, NULL, SPA_PARAM_ROUTE_direction,
                             SPA_POD_Id(&direction), SPA_PARAM_ROUTE_device, SPA_POD_Int(&device),
                             SPA_PARAM_ROUTE_name, SPA_POD_String(&name), SPA_PARAM_ROUTE_description,
                             SPA_POD_OPT_String(&description)) < 0 ||
        direction != SPA_DIRECTION_OUTPUT)
        return;
    // One active route per profile device: a reply to an earlier enumeration is replaced by a later one.
    struct router_route *route;
    spa_list_for_each(route, &d->routes, link) if (route->device == device) break;
    if (spa_list_is_end(route, &d->routes, link)) {
        route = calloc(1, sizeof(*route));
        if (!route) return;
        route->device = device;
        spa_list_append(&d->routes, &route->link);
    } else {
        free(route->name);
        free(route->description);
    }
    route->name = strdup(name);
    route->description = strdup(description ? description : name);
}

static const struct pw_device_events device_events = {
    PW_VERSION_DEVICE_EVENTS,
    .info = device_info,
    .param = device_param,
};

static void free_device(struct router_device *d) {
    spa_list_remove(&d->link);
    spa_hook_remove(&d->listener);
    pw_proxy_destroy(d->proxy);
    clear_routes(d);
    free(d);
}

/// The "name" of a default.audio.sink value ({"name":"..."}), copied; NULL when there is none.
static char *default_name(const char *json) {
    struct spa_json it[2];
    char key[64];
    char name[256];
    if (json == NULL) return NULL;
    spa_json_init(&it[0], json, strlen(json));
    if (spa_json_enter_object(&it[0], &it[1]) <= 0) return NULL;
    while (spa_json_get_string(&it[1], key, sizeof(key)) > 0) {
        if (strcmp(key, "name") == 0) {
            if (spa_json_get_string(&it[1], name, sizeof(name)) <= 0) return NULL;
            return strdup(name);
        }
        const char *value;
        if (spa_json_next(&it[1], &value) <= 0) return NULL;
    }
    return NULL;
}

static void free_value(struct router_value *v) {
    spa_list_remove(&v->link);
    free(v->type);
    free(v->value);
    free(v);
}

static void apply(struct router_stream *s) {
    struct gh_router *r = s->router;
    if (!s->target || s->applied || !r->metadata || !r->metadata_ready) return;
    s->applied = 1;
    pw_metadata_set_property((struct pw_metadata *)r->metadata, s->id, TARGET_KEY, "Spa:String", s->target);
}

static void stream_info(void *data, const struct pw_node_info *info) {
    struct router_stream *s = data;
    if (s->decided || info->props == NULL || !(info->change_mask & PW_NODE_CHANGE_MASK_PROPS)) return;
    s->decided = 1;
    char target[256];
    if (s->router->decide(s->router->data, s->id, info->props, target, sizeof(target))) {
        s->target = strdup(target);
        apply(s);
    }
}

static const struct pw_node_events stream_events = {
    PW_VERSION_NODE_EVENTS,
    .info = stream_info,
};

static void free_stream(struct router_stream *s) {
    spa_list_remove(&s->link);
    spa_hook_remove(&s->listener);
    pw_proxy_destroy(s->proxy);
    free(s->target);
    free(s);
}

static void free_sink(struct router_sink *k) {
    spa_list_remove(&k->link);
    pw_properties_free(k->props);
    free(k);
}

static int metadata_property(void *data, uint32_t subject, const char *key, const char *type, const char *value) {
    struct gh_router *r = data;
    if (subject == PW_ID_CORE && (key == NULL || strcmp(key, "default.audio.sink") == 0)) {
        char *name = key ? default_name(value) : NULL;
        int same = (name == NULL && r->default_sink == NULL) ||
                   (name && r->default_sink && strcmp(name, r->default_sink) == 0);
        free(r->default_sink);
        r->default_sink = name;
        if (!same) report_default_sink(r);
        if (key) return 0;
    }
    if (key != NULL && strcmp(key, TARGET_KEY) != 0) return 0;
    struct router_stream *s;
    spa_list_for_each(s, &r->streams, link) if (s->id == subject && s->applied) return 0;
    struct router_value *v = find_value(r, subject);
    if (v) free_value(v);
    if (key == NULL || value == NULL) return 0;
    v = calloc(1, sizeof(*v));
    if (!v) return 0;
    v->subject = subject;
    v->type = type ? strdup(type) : NULL;
    v->value = strdup(value);
    spa_list_append(&r->values, &v->link);
    return 0;
}

static const struct pw_metadata_events metadata_events = {
    PW_VERSION_METADATA_EVENTS,
    .property = metadata_property,
};

static void registry_global(void *data, uint32_t id, uint32_t permissions, const char *type, uint32_t version,
                            const struct spa_dict *props) {
    struct gh_router *r = data;
    (void)permissions; (void)version;
    if (type == NULL || props == NULL) return;
    if (strcmp(type, PW_TYPE_INTERFACE_Device) == 0 && r->default_sink_changed) {
        const char *media_class = spa_dict_lookup(props, PW_KEY_MEDIA_CLASS);
            if (media_class == NULL || strcmp(media_class, "Audio/Device") != 0) return;
        struct router_device *d = calloc(1, sizeof(*d));
        if (!d) return;
        d->router = r;
        d->id = id;
        d->done_seq = -1;
        spa_list_init(&d->routes);
        d->proxy = pw_registry_bind(r->registry, id, PW_TYPE_INTERFACE_Device, PW_VERSION_DEVICE, 0);
        if (!d->proxy) { free(d); return; }
        pw_proxy_add_object_listener(d->proxy, &d->listener, &device_events, d);
        spa_list_append(&r->devices, &d->link);
    } else if (strcmp(type, PW_TYPE_INTERFACE_Node) == 0) {
        const char *media_class = spa_dict_lookup(props, PW_KEY_MEDIA_CLASS);
        if (media_class && strcmp(media_class, "Audio/Sink") == 0) {
            struct router_sink *k = calloc(1, sizeof(*k));
            if (!k) return;
            k->id = id;
            k->props = pw_properties_new_dict(props);
            spa_list_append(&r->sinks, &k->link);
            const char *name = spa_dict_lookup(props, PW_KEY_NODE_NAME);
            if (name && r->default_sink && strcmp(name, r->default_sink) == 0) report_default_sink(r);
            return;
        }
        if (!r->decide || media_class == NULL || strcmp(media_class, "Stream/Output/Audio") != 0) return;
        struct router_stream *s = calloc(1, sizeof(*s));
        if (!s) return;
        s->router = r;
        s->id = id;
        s->proxy = pw_registry_bind(r->registry, id, PW_TYPE_INTERFACE_Node, PW_VERSION_NODE, 0);
        if (!s->proxy) { free(s); return; }
        pw_proxy_add_object_listener(s->proxy, &s->listener, &stream_events, s);
        spa_list_append(&r->streams, &s->link);
    } else if (strcmp(type, PW_TYPE_INTERFACE_Metadata) == 0 && r->metadata == NULL) {
        const char *name = spa_dict_lookup(props, PW_KEY_METADATA_NAME);
        if (name == NULL || strcmp(name, "default") != 0) return;
        r->metadata = pw_registry_bind(r->registry, id, PW_TYPE_INTERFACE_Metadata, PW_VERSION_METADATA, 0);
        if (!r->metadata) return;
        r->metadata_id = id;
        pw_proxy_add_object_listener(r->metadata, &r->metadata_listener, &metadata_events, r);
        // The metadata's current values arrive before the reply to this sync: moves wait for it.
        r->metadata_ready_seq = pw_core_sync(r->core, PW_ID_CORE, 0);
    }
}

static void registry_global_remove(void *data, uint32_t id) {
    struct gh_router *r = data;
    struct router_stream *s, *t;
    spa_list_for_each_safe(s, t, &r->streams, link) if (s->id == id) free_stream(s);
    struct router_sink *k, *l;
    spa_list_for_each_safe(k, l, &r->sinks, link) if (k->id == id) free_sink(k);
    struct router_device *d, *e;
    spa_list_for_each_safe(d, e, &r->devices, link) if (d->id == id) free_device(d);
    struct router_value *v = find_value(r, id);
    if (v) free_value(v);
    if (r->metadata && id == r->metadata_id) {
        spa_hook_remove(&r->metadata_listener);
        pw_proxy_destroy(r->metadata);
        r->metadata = NULL;
        r->metadata_ready = 0;
    }
}

static const struct pw_registry_events registry_events = {
    PW_VERSION_REGISTRY_EVENTS,
    .global = registry_global,
    .global_remove = registry_global_remove,
};

static void core_done(void *data, uint32_t id, int seq) {
    struct gh_router *r = data;
    if (id != PW_ID_CORE) return;
    struct router_device *d;
    spa_list_for_each(d, &r->devices, link) {
        if (seq != d->done_seq) continue;
        d->ready = 1;
        struct router_sink *k;
        spa_list_for_each(k, &r->sinks, link) {
            const char *name = pw_properties_get(k->props, PW_KEY_NODE_NAME);
            if (name && r->default_sink && strcmp(name, r->default_sink) == 0 &&
                find_device(r, pw_properties_get(k->props, PW_KEY_DEVICE_ID)) == d)
                report_default_sink(r);
        }
        break;
    }
    if (r->metadata && !r->metadata_ready && seq == r->metadata_ready_seq) {
        r->metadata_ready = 1;
        struct router_stream *s;
        spa_list_for_each(s, &r->streams, link) apply(s);
    }
    if (seq == r->restore_seq) {
        r->restored = 1;
        pw_thread_loop_signal(r->loop, false);
    }
}

static const struct pw_core_events core_events = {
    PW_VERSION_CORE_EVENTS,
    .done = core_done,
};

struct gh_router *gh_router_new(struct pw_thread_loop *loop, struct pw_core *core, gh_router_decide decide,
                                gh_router_default_sink default_sink, void *data) {
    struct gh_router *r = calloc(1, sizeof(*r));
    if (!r) return NULL;
    r->loop = loop;
    r->core = core;
    r->decide = decide;
    r->default_sink_changed = default_sink;
    r->data = data;
    r->restore_seq = -1;
    r->metadata_ready_seq = -1;
    spa_list_init(&r->streams);
    spa_list_init(&r->values);
    spa_list_init(&r->sinks);
    spa_list_init(&r->devices);
    pw_core_add_listener(core, &r->core_listener, &core_events, r);
    r->registry = pw_core_get_registry(core, PW_VERSION_REGISTRY, 0);
    if (!r->registry) { spa_hook_remove(&r->core_listener); free(r); return NULL; }
    pw_registry_add_listener(r->registry, &r->registry_listener, &registry_events, r);
    return r;
}

int gh_router_restore(struct gh_router *r, int timeout_ms) {
    if (!r->metadata) return 0;
    int moved = 0;
    struct router_stream *s;
    spa_list_for_each(s, &r->streams, link) {
        if (!s->applied) continue;
        struct router_value *v = find_value(r, s->id);
        pw_metadata_set_property((struct pw_metadata *)r->metadata, s->id, TARGET_KEY, v ? v->type : NULL,
                                 v ? v->value : NULL);
        s->applied = 0;
        moved++;
    }
    r->restored = 0;
    r->restore_seq = pw_core_sync(r->core, PW_ID_CORE, 0);
    int waited = 0;
    while (!r->restored && waited < timeout_ms) {
        pw_thread_loop_timed_wait(r->loop, 1);
        waited += 1000;
    }
    return r->restored ? moved : -1;
}

void gh_router_destroy(struct gh_router *r) {
    struct router_stream *s, *t;
    spa_list_for_each_safe(s, t, &r->streams, link) free_stream(s);
    struct router_value *v, *w;
    spa_list_for_each_safe(v, w, &r->values, link) free_value(v);
    struct router_sink *k, *l;
    spa_list_for_each_safe(k, l, &r->sinks, link) free_sink(k);
    struct router_device *d, *e;
    spa_list_for_each_safe(d, e, &r->devices, link) free_device(d);
    free(r->default_sink);
    if (r->metadata) {
        spa_hook_remove(&r->metadata_listener);
        pw_proxy_destroy(r->metadata);
    }
    spa_hook_remove(&r->registry_listener);
    pw_proxy_destroy((struct pw_proxy *)r->registry);
    spa_hook_remove(&r->core_listener);
    free(r);
}
