#include "pipewire_glue.h"

#include <pipewire/extensions/metadata.h>
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

static void report_default_sink(struct gh_router *r) {
    if (!r->default_sink_changed) return;
    if (!r->default_sink) {
        r->default_sink_changed(r->data, NULL);
        return;
    }
    struct router_sink *k;
    spa_list_for_each(k, &r->sinks, link) {
        const char *name = pw_properties_get(k->props, PW_KEY_NODE_NAME);
        if (name && strcmp(name, r->default_sink) == 0) {
            r->default_sink_changed(r->data, &k->props->dict);
            return;
        }
    }
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
    if (strcmp(type, PW_TYPE_INTERFACE_Node) == 0) {
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
