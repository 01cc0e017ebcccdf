// route-device-fixture: an output device with routes, as a sound card with speakers and a headphone jack shows itself
// to PipeWire, for tests on machines without sound hardware. It exports an Audio/Device with two output routes
// (EnumRoute) and one active route (Route), and makes a null sink that names the device (device.id) and its profile
// device 0 (card.profile.device), as ALSA's sinks do. It prints "ready DEVICE_ID" when both are in the registry.
// Each line on stdin, "route NAME", makes the route of that name active, as plugging in headphones does.
#include <errno.h>
#include <pipewire/pipewire.h>
#include <spa/monitor/device.h>
#include <spa/monitor/utils.h>
#include <spa/param/param.h>
#include <spa/param/route.h>
#include <spa/pod/builder.h>
#include <spa/utils/keys.h>
#include <spa/utils/result.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

struct route {
    const char *name;
    const char *description;
    int priority;
};

static const struct route routes[] = {
    {"analog-output-speaker", "Speakers", 100},
    {"analog-output-headphones", "Headphones", 200},
};

struct fixture {
    struct pw_main_loop *loop;
    struct pw_core *core;
    struct spa_device device;
    struct spa_hook_list hooks;
    struct spa_param_info params[2];
    int active;
    struct pw_proxy *device_proxy;
    struct spa_hook device_proxy_listener;
    struct pw_proxy *sink;
    struct spa_hook sink_listener;
    uint32_t device_id;
};

static struct spa_pod *route_pod(struct spa_pod_builder *b, uint32_t id, int index) {
    return spa_pod_builder_add_object(
        b, SPA_TYPE_OBJECT_ParamRoute, id, SPA_PARAM_ROUTE_index, SPA_POD_Int(index), SPA_PARAM_ROUTE_direction,
        SPA_POD_Id(SPA_DIRECTION_OUTPUT), SPA_PARAM_ROUTE_device, SPA_POD_Int(0), SPA_PARAM_ROUTE_name,
        SPA_POD_String(routes[index].name), SPA_PARAM_ROUTE_description, SPA_POD_String(routes[index].description),
        SPA_PARAM_ROUTE_priority, SPA_POD_Int(routes[index].priority), SPA_PARAM_ROUTE_available,
        SPA_POD_Id(SPA_PARAM_AVAILABILITY_yes));
}

static void emit_info(struct fixture *f, int full) {
    struct spa_dict_item items[] = {
        {SPA_KEY_DEVICE_NAME, "graphhost_fixture_card"},
        {SPA_KEY_DEVICE_DESCRIPTION, "graphhost fixture card"},
        {SPA_KEY_MEDIA_CLASS, "Audio/Device"},
    };
    struct spa_dict props = SPA_DICT_INIT_ARRAY(items);
    struct spa_device_info info = SPA_DEVICE_INFO_INIT();
    info.change_mask = SPA_DEVICE_CHANGE_MASK_PARAMS | (full ? SPA_DEVICE_CHANGE_MASK_PROPS : 0);
    info.props = &props;
    info.params = f->params;
    info.n_params = 2;
    spa_device_emit_info(&f->hooks, &info);
}

static int device_add_listener(void *object, struct spa_hook *listener, const struct spa_device_events *events,
                               void *data) {
    struct fixture *f = object;
    struct spa_hook_list save;
    spa_hook_list_isolate(&f->hooks, &save, listener, events, data);
    emit_info(f, 1);
    spa_hook_list_join(&f->hooks, &save);
    return 0;
}

static int device_sync(void *object, int seq) {
    struct fixture *f = object;
    spa_device_emit_result(&f->hooks, seq, 0, 0, NULL);
    return 0;
}

static int device_enum_params(void *object, int seq, uint32_t id, uint32_t start, uint32_t num,
                              const struct spa_pod *filter) {
    struct fixture *f = object;
    (void)filter;
    uint32_t count = 0;
    for (uint32_t index = start; count < num; index++) {
        uint8_t buffer[1024];
        struct spa_pod_builder b = SPA_POD_BUILDER_INIT(buffer, sizeof(buffer));
        struct spa_pod *param;
        if (id == SPA_PARAM_EnumRoute && index < 2)
            param = route_pod(&b, id, (int)index);
        else if (id == SPA_PARAM_Route && index == 0)
            param = route_pod(&b, id, f->active);
        else
            break;
        struct spa_result_device_params result = {.id = id, .index = index, .next = index + 1, .param = param};
        spa_device_emit_result(&f->hooks, seq, 0, SPA_RESULT_TYPE_DEVICE_PARAMS, &result);
        count++;
    }
    return 0;
}

/// The fixture chooses its routes itself, as a jack does; a session manager's choice is taken and ignored.
static int device_set_param(void *object, uint32_t id, uint32_t flags, const struct spa_pod *param) {
    (void)object; (void)id; (void)flags; (void)param;
    return 0;
}

static const struct spa_device_methods device_methods = {
    SPA_VERSION_DEVICE_METHODS,
    .add_listener = device_add_listener,
    .sync = device_sync,
    .enum_params = device_enum_params,
    .set_param = device_set_param,
};

static void sink_bound(void *data, uint32_t global_id) {
    struct fixture *f = data;
    (void)global_id;
    printf("ready %u\n", f->device_id);
    fflush(stdout);
}

static const struct pw_proxy_events sink_events = {PW_VERSION_PROXY_EVENTS, .bound = sink_bound};

static void device_bound(void *data, uint32_t global_id) {
    struct fixture *f = data;
    if (f->sink) return;
    f->device_id = global_id;
    char id[16];
    snprintf(id, sizeof(id), "%u", global_id);
    struct spa_dict_item items[] = {
        {"factory.name", "support.null-audio-sink"},
        {PW_KEY_NODE_NAME, "graphhost_fixture_sink"},
        {PW_KEY_NODE_DESCRIPTION, "graphhost fixture card"},
        {PW_KEY_MEDIA_CLASS, "Audio/Sink"},
        {"audio.position", "FL,FR"},
        {"monitor.channel-volumes", "true"},
        {PW_KEY_DEVICE_ID, id},
        {"card.profile.device", "0"},
    };
    struct spa_dict props = SPA_DICT_INIT_ARRAY(items);
    f->sink = pw_core_create_object(f->core, "adapter", PW_TYPE_INTERFACE_Node, PW_VERSION_NODE, &props, 0);
    if (!f->sink) {
        fprintf(stderr, "route-device-fixture: cannot make the sink\n");
        pw_main_loop_quit(f->loop);
        return;
    }
    pw_proxy_add_listener(f->sink, &f->sink_listener, &sink_events, f);
}

static const struct pw_proxy_events device_proxy_events = {PW_VERSION_PROXY_EVENTS, .bound = device_bound};

static void on_stdin(void *data, int fd, uint32_t mask) {
    struct fixture *f = data;
    char line[256];
    ssize_t n = (mask & SPA_IO_IN) ? read(fd, line, sizeof(line) - 1) : 0;
    if (n <= 0) {
        pw_main_loop_quit(f->loop);
        return;
    }
    line[n] = 0;
    for (char *l = strtok(line, "\n"); l; l = strtok(NULL, "\n")) {
        for (int i = 0; i < 2; i++) {
            if (strncmp(l, "route ", 6) == 0 && strcmp(l + 6, routes[i].name) == 0 && f->active != i) {
                f->active = i;
                f->params[1].flags ^= SPA_PARAM_INFO_SERIAL;
                emit_info(f, 0);
                printf("route %s\n", routes[i].name);
                fflush(stdout);
            }
        }
    }
}

int main(int argc, char **argv) {
    (void)argc; (void)argv;
    pw_init(NULL, NULL);
    struct fixture f = {0};
    f.loop = pw_main_loop_new(NULL);
    struct pw_context *context = pw_context_new(pw_main_loop_get_loop(f.loop), NULL, 0);
    f.core = pw_context_connect(context, NULL, 0);
    if (!f.core) {
        fprintf(stderr, "route-device-fixture: cannot connect to PipeWire: %s\n", strerror(errno));
        return 1;
    }
    spa_hook_list_init(&f.hooks);
    f.device.iface = SPA_INTERFACE_INIT(SPA_TYPE_INTERFACE_Device, SPA_VERSION_DEVICE, &device_methods, &f);
    f.params[0] = SPA_PARAM_INFO(SPA_PARAM_EnumRoute, SPA_PARAM_INFO_READ);
    f.params[1] = SPA_PARAM_INFO(SPA_PARAM_Route, SPA_PARAM_INFO_READWRITE);
    struct spa_dict_item items[] = {
        {SPA_KEY_DEVICE_NAME, "graphhost_fixture_card"},
        {SPA_KEY_MEDIA_CLASS, "Audio/Device"},
    };
    struct spa_dict props = SPA_DICT_INIT_ARRAY(items);
    f.device_proxy = pw_core_export(f.core, SPA_TYPE_INTERFACE_Device, &props, &f.device, 0);
    if (!f.device_proxy) {
        fprintf(stderr, "route-device-fixture: cannot export the device: %s\n", strerror(errno));
        return 1;
    }
    pw_proxy_add_listener(f.device_proxy, &f.device_proxy_listener, &device_proxy_events, &f);
    pw_loop_add_io(pw_main_loop_get_loop(f.loop), STDIN_FILENO, SPA_IO_IN | SPA_IO_HUP, false, on_stdin, &f);
    pw_main_loop_run(f.loop);
    pw_proxy_destroy(f.sink);
    pw_proxy_destroy(f.device_proxy);
    pw_core_disconnect(f.core);
    pw_context_destroy(context);
    pw_main_loop_destroy(f.loop);
    return 0;
}
