#ifndef GH_PLUGIN_PROBE_GLUE_H
#define GH_PLUGIN_PROBE_GLUE_H

#include <sys/types.h>

/// What a probe loads: LV2 bundles (file: URIs ending in "/") into a lilv world of its own, reading each of the
/// bundle's plugins (name and ports: what lilv asks a dynamic manifest's library for); or LADSPA libraries (paths),
/// opened and asked for every plugin they hold.
typedef enum { GH_PROBE_LV2_BUNDLES, GH_PROBE_LADSPA_LIBRARIES } gh_probe_kind;

/// Starts a child process that loads each of `count` items of `kind`, one after the other. It writes, on the pipe whose
/// read end lands in `read_fd`, a line "\001start I" before item I and "\001done I" after it; whatever the items' code
/// writes on the child's standard output and error comes on the same pipe, between them. The child ends with
/// `_exit(0)` after the last, and dies with the parent. The child runs only C code (lilv, the loader and the plugins'),
/// never the Swift runtime, so forking a process with threads is safe for it. Returns the child's pid, or -1 (errno
/// set) when the pipe or the fork fails.
pid_t gh_probe_start(gh_probe_kind kind, const char *const *items, int count, int *read_fd);

#endif
