#ifndef GH_PIPEWIRE_GLUE_H
#define GH_PIPEWIRE_GLUE_H

#include <pipewire/pipewire.h>
#include <spa/param/audio/format-utils.h>
#include <spa/param/props.h>
#include <spa/param/latency-utils.h>
#include <spa/node/io.h>
#include <spa/utils/result.h>

/// Builds the EnumFormat params a playback stream offers: planar and interleaved 32-bit float at
/// `rate` and `channels`, positions those of the graph's layout (MONO; FL FR; … 5.1 as FL FR FC LFE RL RR; AUX0… beyond
/// 8 channels). Returns how many params were written (2).
uint32_t gh_build_formats(uint8_t *buffer, uint32_t size, uint32_t rate, uint32_t channels,
                                 const struct spa_pod **params);

/// Builds the EnumFormat param of a MIDI stream (application/control: a sequence of MIDI controls).
const struct spa_pod *gh_build_midi_format(uint8_t *buffer, uint32_t size);

/// Receives one MIDI message of a MIDI input stream's cycle: `offset` in frames from the cycle's start.
typedef void (*gh_midi_receive)(void *target, uint32_t offset, const uint8_t *bytes, uint32_t size);

/// A MIDI input stream's process callback (the data thread): takes the cycle's buffer, hands each MIDI message of
/// its control sequence to `receive`, and gives the buffer back. Real-time safe.
void gh_midi_input_process(struct pw_stream *stream, gh_midi_receive receive, void *target);

/// Builds a Buffers param asking for buffers that hold `max_frames` frames of `stride` bytes.
const struct spa_pod *gh_build_buffers(uint8_t *buffer, uint32_t size, uint32_t max_frames, uint32_t stride,
                                              uint32_t blocks);

/// Reads a negotiated format: 1 if it is raw 32-bit float audio (planar or not), else 0.
int gh_parse_format(const struct spa_pod *param, uint32_t *rate, uint32_t *channels, int *planar);

/// pw_core_add_listener is a macro in PipeWire's headers; this is the same call as a function.
void gh_core_add_listener(struct pw_core *core, struct spa_hook *listener,
                                 const struct pw_core_events *events, void *data);



/// Looks for a node whose node.name, object.serial or id equals `target`, by listing the registry
/// and waiting (at most `timeout_ms`) for the core's sync reply. The caller holds the thread loop's lock.
/// Returns 1 if found, 0 if not, -1 on timeout.
int gh_find_node(struct pw_thread_loop *loop, struct pw_core *core, const char *target, int timeout_ms);


/// How a published parameter's value is typed: a float range, an int range, or a bool.
enum gh_param_kind { GH_PARAM_FLOAT = 0, GH_PARAM_INT = 1, GH_PARAM_BOOL = 2 };

/// Builds the params that publish a graph's parameters as module-filter-chain publishes its controls: one PropInfo
/// per parameter (its name, its description, its type: a float or int range with the current value as default, or
/// a bool; params = true), then one Props whose SPA_PROP_params struct holds name, value pairs. `kinds` holds
/// gh_param_kind values. Writes at most `max_params` pointers to `params`; returns how many (0 when the
/// buffer is too small).
uint32_t gh_build_param_props(uint8_t *buffer, uint32_t size, const char *const *names,
                                     const char *const *descriptions, const double *values, const double *mins,
                                     const double *maxs, const int *kinds, uint32_t count,
                                     const struct spa_pod **params, uint32_t max_params);

/// Receives one name, value pair of a Props param's SPA_PROP_params (`valid` 0 when the value is not a number or bool).
typedef void (*gh_prop_receive)(void *target, const char *name, double value, int valid);

/// Hands each pair of a Props param's SPA_PROP_params struct to `receive`; returns how many pairs it found.
int gh_parse_param_props(const struct spa_pod *param, gh_prop_receive receive, void *target);
/// PipeWire's profiler (libpipewire-module-profiler in the daemon), bound on a core: it adds up one node's busy time
/// (finish − awake) per cycle and the cycles' durations. Call every function with the thread loop locked.
struct gh_profiler;

/// One node's figures since the last take: finished cycles, their summed and largest busy time and their summed
/// duration, in nanoseconds.
struct gh_profiler_totals {
    uint64_t cycles;
    uint64_t busy_ns;
    uint64_t max_busy_ns;
    uint64_t period_ns;
};

/// Loads a PipeWire module into a client context (pw_context_load_module, impl.h: not imported into Swift); NULL and
/// errno on failure.
void *gh_load_module(struct pw_context *context, const char *name, const char *args);
/// Unloads a module `gh_load_module` loaded.
void gh_unload_module(void *module);

/// Loads the profiler's protocol extension into a client context (before it connects); returns 0 or a negative errno.
int gh_profiler_load_protocol(struct pw_context *context);

/// Looks for the daemon's profiler on `core` and binds it when found.
struct gh_profiler *gh_profiler_new(struct pw_core *core);

/// 1 once bound, 0 while the registry is still being read, -1 when the daemon has none.
int gh_profiler_state(const struct gh_profiler *profiler);

/// The node whose cycles are counted (the stream's node id); a change starts the totals afresh.
void gh_profiler_set_node(struct gh_profiler *profiler, uint32_t node_id);

/// Copies the totals since the last take and starts them afresh.
void gh_profiler_take(struct gh_profiler *profiler, struct gh_profiler_totals *totals);

void gh_profiler_destroy(struct gh_profiler *profiler);

/// Watches the registry and PipeWire's "default" metadata (stream_router.c). With `decide`, it moves playback
/// streams: it reads each Stream/Output/Audio node's properties and, when `decide` writes a sink's node.name into
/// `target` (`size` bytes) and returns 1, sets the stream's target.object in the metadata, which the session manager
/// follows. With `default_sink`, it reports the default sink's global properties whenever the default sink changes
/// or appears, or its device's active route changes (NULL: none), with the output route the sink plays through as
/// device.route.name and device.route.description when its device (device.id) reports one. Call every function with the thread loop locked; callbacks run on the loop's thread.
struct gh_router;

typedef int (*gh_router_decide)(void *data, uint32_t node_id, const struct spa_dict *props, char *target,
                                 size_t size);

typedef void (*gh_router_default_sink)(void *data, const struct spa_dict *props);

struct gh_router *gh_router_new(struct pw_thread_loop *loop, struct pw_core *core, gh_router_decide decide,
                                gh_router_default_sink default_sink, void *data);

/// Puts back each moved stream's target.object as it was before (none: removed) and waits, at most `timeout_ms`,
/// until the daemon has it. Returns how many streams were put back, or -1 on timeout.
int gh_router_restore(struct gh_router *router, int timeout_ms);

void gh_router_destroy(struct gh_router *router);

#endif
