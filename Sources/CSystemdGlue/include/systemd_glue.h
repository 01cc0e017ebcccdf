#ifndef GH_SYSTEMD_GLUE_H
#define GH_SYSTEMD_GLUE_H
#include <stdint.h>
#include <stddef.h>
#include <sys/eventfd.h>  /* the bus thread's wakeup, for Swift (Glibc does not export it) */
#include <sys/inotify.h>  /* the service configuration watch, for Swift */

/// An MPRIS player object (/org/mpris/MediaPlayer2 with org.mpris.MediaPlayer2 and org.mpris.MediaPlayer2.Player)
/// on the user's session bus, through sd-bus (its object tables are C macros). One thread opens, runs and closes it.
typedef struct gh_mpris gh_mpris;

typedef struct {
    void *context;
    /* A method that changes playback: "Play", "Pause", "PlayPause", "Stop" or "Quit". Returns NULL when done, or an
       error message (valid until the next call), sent back as org.mpris.MediaPlayer2.Error.Failed. */
    const char *(*command)(void *context, const char *method);
    /* The track position in microseconds. */
    int64_t (*position)(void *context);
} gh_mpris_callbacks;

typedef struct {
    const char *track_id;      /* an object path */
    const char *title;         /* NULL: none */
    const char *artist;        /* NULL: none */
    const char *url;           /* NULL: none */
    int64_t length_us;         /* < 0: unknown (an endless stream) */
} gh_mpris_metadata;

enum {
    GH_MPRIS_NO_BUS = -1,      /* no session bus to connect to */
    GH_MPRIS_NAME_TAKEN = -2,  /* another process owns the bus name */
    GH_MPRIS_FAILED = -3,
};

/* Connects to the session bus, publishes the object and requests `bus_name`. Returns 0, or one of the codes above
   with a message in `error`. */
int gh_mpris_open(gh_mpris **out, const char *bus_name, gh_mpris_callbacks callbacks,
                         char *error, size_t error_size);

/* Handles every pending bus message, then waits until the bus or `wake_fd` has something, at most `max_wait_ms`.
   Returns 1 when `wake_fd` is readable, 0 otherwise, or a negative errno when the connection failed. */
int gh_mpris_wait(gh_mpris *mpris, int wake_fd, int max_wait_ms);

/* Sets PlaybackStatus ("Playing", "Paused" or "Stopped") and emits PropertiesChanged. */
void gh_mpris_set_playback_status(gh_mpris *mpris, const char *status);

/* Sets Metadata (the strings are copied) and emits PropertiesChanged. */
void gh_mpris_set_metadata(gh_mpris *mpris, const gh_mpris_metadata *metadata);

/* Releases the name and closes the connection. */
void gh_mpris_close(gh_mpris *mpris);

#endif
