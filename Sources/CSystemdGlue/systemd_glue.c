#include "systemd_glue.h"

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <systemd/sd-bus.h>
#include <dlfcn.h>
#include <pthread.h>

#define OBJECT_PATH "/org/mpris/MediaPlayer2"
#define ROOT_INTERFACE "org.mpris.MediaPlayer2"
#define PLAYER_INTERFACE "org.mpris.MediaPlayer2.Player"
#define NO_TRACK "/org/mpris/MediaPlayer2/TrackList/NoTrack"

struct gh_mpris {
    sd_bus *bus;
    sd_bus_slot *root_slot, *player_slot;
    gh_mpris_callbacks callbacks;
    char *playback_status;
    char *track_id, *title, *artist, *url;
    int64_t length_us;
};

/* libsystemd is loaded with dlopen when the first MPRIS player opens: linked, it and its compression and crypto
 * libraries would be mapped and initialised by every graphhost process (an offline render among them). */
static struct {
    int (*sd_bus_add_object_vtable)(sd_bus *bus, sd_bus_slot **slot, const char *path, const char *interface, const sd_bus_vtable *vtable, void *userdata);
    int (*sd_bus_emit_properties_changed)(sd_bus *bus, const char *path, const char *interface, const char *name, ...);
    int (*sd_bus_error_set)(sd_bus_error *e, const char *name, const char *message);
    int (*sd_bus_error_setf)(sd_bus_error *e, const char *name, const char *format, ...);
    sd_bus *(*sd_bus_flush_close_unref)(sd_bus *bus);
    int (*sd_bus_get_events)(sd_bus *bus);
    int (*sd_bus_get_fd)(sd_bus *bus);
    int (*sd_bus_get_timeout)(sd_bus *bus, uint64_t *timeout_usec);
    int (*sd_bus_message_append)(sd_bus_message *m, const char *types, ...);
    int (*sd_bus_message_close_container)(sd_bus_message *m);
    const char *(*sd_bus_message_get_member)(sd_bus_message *m);
    int (*sd_bus_message_open_container)(sd_bus_message *m, char type, const char *contents);
    int (*sd_bus_open_user)(sd_bus **ret);
    int (*sd_bus_process)(sd_bus *bus, sd_bus_message **r);
    int (*sd_bus_reply_method_return)(sd_bus_message *call, const char *types, ...);
    int (*sd_bus_request_name)(sd_bus *bus, const char *name, uint64_t flags);
    sd_bus_slot *(*sd_bus_slot_unref)(sd_bus_slot *slot);
} bus_api;
static pthread_once_t bus_once = PTHREAD_ONCE_INIT;
static void set_vtable_format(const unsigned *format);
static char bus_failure[256];

static void load_bus(void) {
    void *library = dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        snprintf(bus_failure, sizeof bus_failure, "cannot load libsystemd: %s", dlerror());
        return;
    }
#define RESOLVE(name) \
    if (!(*(void **)&bus_api.name = dlsym(library, #name))) { \
        snprintf(bus_failure, sizeof bus_failure, "cannot load libsystemd: %s", dlerror()); \
        return; \
    }
    RESOLVE(sd_bus_add_object_vtable)
    RESOLVE(sd_bus_emit_properties_changed)
    RESOLVE(sd_bus_error_set)
    RESOLVE(sd_bus_error_setf)
    RESOLVE(sd_bus_flush_close_unref)
    RESOLVE(sd_bus_get_events)
    RESOLVE(sd_bus_get_fd)
    RESOLVE(sd_bus_get_timeout)
    RESOLVE(sd_bus_message_append)
    RESOLVE(sd_bus_message_close_container)
    RESOLVE(sd_bus_message_get_member)
    RESOLVE(sd_bus_message_open_container)
    RESOLVE(sd_bus_open_user)
    RESOLVE(sd_bus_process)
    RESOLVE(sd_bus_reply_method_return)
    RESOLVE(sd_bus_request_name)
    RESOLVE(sd_bus_slot_unref)
#undef RESOLVE
    const unsigned *format = dlsym(library, "sd_bus_object_vtable_format");
    if (!format) {
        snprintf(bus_failure, sizeof bus_failure, "cannot load libsystemd: %s", dlerror());
        return;
    }
    set_vtable_format(format);
}

static char *copy(const char *text) { return text ? strdup(text) : NULL; }

/* MARK: methods */

static int command(sd_bus_message *message, void *userdata, sd_bus_error *error) {
    gh_mpris *mpris = userdata;
    const char *failure = mpris->callbacks.command(mpris->callbacks.context, bus_api.sd_bus_message_get_member(message));
    if (failure) return bus_api.sd_bus_error_set(error, "org.mpris.MediaPlayer2.Error.Failed", failure);
    return bus_api.sd_bus_reply_method_return(message, NULL);
}

static int no_op(sd_bus_message *message, void *userdata, sd_bus_error *error) {
    (void)userdata; (void)error;
    return bus_api.sd_bus_reply_method_return(message, NULL);
}

static int not_supported(sd_bus_message *message, void *userdata, sd_bus_error *error) {
    (void)userdata;
    return bus_api.sd_bus_error_setf(error, SD_BUS_ERROR_NOT_SUPPORTED, "graphhost cannot %s (a live graph plays on; CanSeek and CanRaise are false)",
                             bus_api.sd_bus_message_get_member(message));
}

/* MARK: properties */

static int get_true(sd_bus *bus, const char *path, const char *interface, const char *property, sd_bus_message *reply,
                    void *userdata, sd_bus_error *error) {
    (void)bus; (void)path; (void)interface; (void)property; (void)userdata; (void)error;
    return bus_api.sd_bus_message_append(reply, "b", 1);
}

static int get_false(sd_bus *bus, const char *path, const char *interface, const char *property, sd_bus_message *reply,
                     void *userdata, sd_bus_error *error) {
    (void)bus; (void)path; (void)interface; (void)property; (void)userdata; (void)error;
    return bus_api.sd_bus_message_append(reply, "b", 0);
}

static int get_one(sd_bus *bus, const char *path, const char *interface, const char *property, sd_bus_message *reply,
                   void *userdata, sd_bus_error *error) {
    (void)bus; (void)path; (void)interface; (void)property; (void)userdata; (void)error;
    return bus_api.sd_bus_message_append(reply, "d", 1.0);
}

static int get_identity(sd_bus *bus, const char *path, const char *interface, const char *property, sd_bus_message *reply,
                        void *userdata, sd_bus_error *error) {
    (void)bus; (void)path; (void)interface; (void)property; (void)userdata; (void)error;
    return bus_api.sd_bus_message_append(reply, "s", "graphhost");
}

static int get_uri_schemes(sd_bus *bus, const char *path, const char *interface, const char *property, sd_bus_message *reply,
                           void *userdata, sd_bus_error *error) {
    (void)bus; (void)path; (void)interface; (void)property; (void)userdata; (void)error;
    return bus_api.sd_bus_message_append(reply, "as", 3, "file", "http", "https");
}

static int get_mime_types(sd_bus *bus, const char *path, const char *interface, const char *property, sd_bus_message *reply,
                          void *userdata, sd_bus_error *error) {
    (void)bus; (void)path; (void)interface; (void)property; (void)userdata; (void)error;
    return bus_api.sd_bus_message_append(reply, "as", 1, "audio/mpeg");
}

static int get_playback_status(sd_bus *bus, const char *path, const char *interface, const char *property, sd_bus_message *reply,
                               void *userdata, sd_bus_error *error) {
    (void)bus; (void)path; (void)interface; (void)property; (void)error;
    gh_mpris *mpris = userdata;
    return bus_api.sd_bus_message_append(reply, "s", mpris->playback_status ? mpris->playback_status : "Stopped");
}

static int get_position(sd_bus *bus, const char *path, const char *interface, const char *property, sd_bus_message *reply,
                        void *userdata, sd_bus_error *error) {
    (void)bus; (void)path; (void)interface; (void)property; (void)error;
    gh_mpris *mpris = userdata;
    return bus_api.sd_bus_message_append(reply, "x", mpris->callbacks.position(mpris->callbacks.context));
}

static int get_metadata(sd_bus *bus, const char *path, const char *interface, const char *property, sd_bus_message *reply,
                        void *userdata, sd_bus_error *error) {
    (void)bus; (void)path; (void)interface; (void)property; (void)error;
    gh_mpris *mpris = userdata;
    int r = bus_api.sd_bus_message_open_container(reply, 'a', "{sv}");
    if (r < 0) return r;
    r = bus_api.sd_bus_message_append(reply, "{sv}", "mpris:trackid", "o", mpris->track_id ? mpris->track_id : NO_TRACK);
    if (r >= 0 && mpris->title) r = bus_api.sd_bus_message_append(reply, "{sv}", "xesam:title", "s", mpris->title);
    if (r >= 0 && mpris->artist) r = bus_api.sd_bus_message_append(reply, "{sv}", "xesam:artist", "as", 1, mpris->artist);
    if (r >= 0 && mpris->url) r = bus_api.sd_bus_message_append(reply, "{sv}", "xesam:url", "s", mpris->url);
    if (r >= 0 && mpris->length_us >= 0) r = bus_api.sd_bus_message_append(reply, "{sv}", "mpris:length", "x", mpris->length_us);
    if (r < 0) return r;
    return bus_api.sd_bus_message_close_container(reply);
}

#define CONST_PROPERTY(name, signature, getter) SD_BUS_PROPERTY(name, signature, getter, 0, SD_BUS_VTABLE_PROPERTY_CONST)
/* SD_BUS_VTABLE_START(0) but for the address of libsystemd's sd_bus_object_vtable_format, set once it is loaded. */
#define VTABLE_START \
    { .type = _SD_BUS_VTABLE_START, .flags = 0, \
      .x = { .start = { .element_size = sizeof(sd_bus_vtable), .features = _SD_BUS_VTABLE_PARAM_NAMES } } }

static sd_bus_vtable root_vtable[] = {
    VTABLE_START,
    SD_BUS_METHOD("Raise", "", "", not_supported, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("Quit", "", "", command, SD_BUS_VTABLE_UNPRIVILEGED),
    CONST_PROPERTY("CanQuit", "b", get_true),
    CONST_PROPERTY("CanRaise", "b", get_false),
    CONST_PROPERTY("HasTrackList", "b", get_false),
    CONST_PROPERTY("Identity", "s", get_identity),
    CONST_PROPERTY("SupportedUriSchemes", "as", get_uri_schemes),
    CONST_PROPERTY("SupportedMimeTypes", "as", get_mime_types),
    SD_BUS_VTABLE_END
};

static sd_bus_vtable player_vtable[] = {
    VTABLE_START,
    SD_BUS_METHOD("Play", "", "", command, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("Pause", "", "", command, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("PlayPause", "", "", command, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("Stop", "", "", command, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("Next", "", "", no_op, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("Previous", "", "", no_op, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("Seek", "x", "", not_supported, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("SetPosition", "ox", "", not_supported, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("OpenUri", "s", "", not_supported, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_SIGNAL("Seeked", "x", 0),
    SD_BUS_PROPERTY("PlaybackStatus", "s", get_playback_status, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("Metadata", "a{sv}", get_metadata, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("Position", "x", get_position, 0, 0),
    CONST_PROPERTY("Rate", "d", get_one),
    CONST_PROPERTY("MinimumRate", "d", get_one),
    CONST_PROPERTY("MaximumRate", "d", get_one),
    CONST_PROPERTY("Volume", "d", get_one),
    CONST_PROPERTY("CanGoNext", "b", get_false),
    CONST_PROPERTY("CanGoPrevious", "b", get_false),
    CONST_PROPERTY("CanPlay", "b", get_true),
    CONST_PROPERTY("CanPause", "b", get_true),
    CONST_PROPERTY("CanSeek", "b", get_false),
    CONST_PROPERTY("CanControl", "b", get_true),
    SD_BUS_VTABLE_END
};

/* The address SD_BUS_VTABLE_START refers to: libsystemd's marker of the tables' layout. */
static void set_vtable_format(const unsigned *format) {
    root_vtable[0].x.start.vtable_format_reference = format;
    player_vtable[0].x.start.vtable_format_reference = format;
}

/* MARK: lifetime */

int gh_mpris_open(gh_mpris **out, const char *bus_name, gh_mpris_callbacks callbacks,
                         char *error, size_t error_size) {
    *out = NULL;
    pthread_once(&bus_once, load_bus);
    if (bus_failure[0]) {
        snprintf(error, error_size, "%s", bus_failure);
        return GH_MPRIS_NO_BUS;
    }
    gh_mpris *mpris = calloc(1, sizeof *mpris);
    if (!mpris) { snprintf(error, error_size, "out of memory"); return GH_MPRIS_FAILED; }
    mpris->callbacks = callbacks;
    mpris->length_us = -1;
    mpris->playback_status = copy("Stopped");
    int r = bus_api.sd_bus_open_user(&mpris->bus);
    if (r < 0) {
        snprintf(error, error_size, "no session bus (%s)", strerror(-r));
        gh_mpris_close(mpris);
        return GH_MPRIS_NO_BUS;
    }
    const char *step = "publishing " OBJECT_PATH;
    r = bus_api.sd_bus_add_object_vtable(mpris->bus, &mpris->root_slot, OBJECT_PATH, ROOT_INTERFACE, root_vtable, mpris);
    if (r >= 0) r = bus_api.sd_bus_add_object_vtable(mpris->bus, &mpris->player_slot, OBJECT_PATH, PLAYER_INTERFACE, player_vtable, mpris);
    if (r >= 0) {
        step = "requesting the bus name";
        r = bus_api.sd_bus_request_name(mpris->bus, bus_name, 0);
    }
    if (r < 0) {
        int code = r == -EEXIST ? GH_MPRIS_NAME_TAKEN : GH_MPRIS_FAILED;
        if (code == GH_MPRIS_NAME_TAKEN) snprintf(error, error_size, "%s is owned by another process", bus_name);
        else snprintf(error, error_size, "%s failed: %s", step, strerror(-r));
        gh_mpris_close(mpris);
        return code;
    }
    *out = mpris;
    return 0;
}

void gh_mpris_close(gh_mpris *mpris) {
    if (!mpris) return;
    bus_api.sd_bus_slot_unref(mpris->root_slot);
    bus_api.sd_bus_slot_unref(mpris->player_slot);
    bus_api.sd_bus_flush_close_unref(mpris->bus);
    free(mpris->playback_status);
    free(mpris->track_id); free(mpris->title); free(mpris->artist); free(mpris->url);
    free(mpris);
}

int gh_mpris_wait(gh_mpris *mpris, int wake_fd, int max_wait_ms) {
    for (;;) {
        int r = bus_api.sd_bus_process(mpris->bus, NULL);
        if (r < 0) return r;
        if (r == 0) break;
    }
    int events = bus_api.sd_bus_get_events(mpris->bus);
    if (events < 0) return events;
    struct pollfd fds[2] = {
        { .fd = bus_api.sd_bus_get_fd(mpris->bus), .events = (short)events },
        { .fd = wake_fd, .events = POLLIN },
    };
    int timeout = max_wait_ms;
    uint64_t until = 0;
    if (bus_api.sd_bus_get_timeout(mpris->bus, &until) > 0 && until != UINT64_MAX) {
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        uint64_t now_us = (uint64_t)now.tv_sec * 1000000u + (uint64_t)now.tv_nsec / 1000u;
        uint64_t bus_ms = until > now_us ? (until - now_us + 999) / 1000 : 0;
        if (timeout < 0 || bus_ms < (uint64_t)timeout) timeout = (int)bus_ms;
    }
    if (poll(fds, 2, timeout) < 0) return errno == EINTR ? 0 : -errno;
    return (fds[1].revents & POLLIN) ? 1 : 0;
}

/* MARK: changes */

void gh_mpris_set_playback_status(gh_mpris *mpris, const char *status) {
    free(mpris->playback_status);
    mpris->playback_status = copy(status);
    bus_api.sd_bus_emit_properties_changed(mpris->bus, OBJECT_PATH, PLAYER_INTERFACE, "PlaybackStatus", NULL);
}

void gh_mpris_set_metadata(gh_mpris *mpris, const gh_mpris_metadata *metadata) {
    free(mpris->track_id); free(mpris->title); free(mpris->artist); free(mpris->url);
    mpris->track_id = copy(metadata->track_id);
    mpris->title = copy(metadata->title);
    mpris->artist = copy(metadata->artist);
    mpris->url = copy(metadata->url);
    mpris->length_us = metadata->length_us;
    bus_api.sd_bus_emit_properties_changed(mpris->bus, OBJECT_PATH, PLAYER_INTERFACE, "Metadata", NULL);
}
