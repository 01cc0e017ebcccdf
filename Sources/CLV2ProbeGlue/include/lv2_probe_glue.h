#ifndef GH_LV2_PROBE_GLUE_H
#define GH_LV2_PROBE_GLUE_H

#include <sys/types.h>

/// Starts a child process that loads each of `count` LV2 bundles (file: URIs ending in "/") into a lilv world of its
/// own, one after the other, and reads each of the bundle's plugins (name and ports: what lilv asks a dynamic
/// manifest's library for). It writes, on the pipe whose read end lands in `read_fd`, a line "\001start I" before
/// bundle I and "\001done I" after it; whatever the bundle's code writes on the child's standard output and error comes
/// on the same pipe, between them. The child ends with `_exit(0)` after the last, and dies with the parent. The child
/// runs only C code (lilv and the bundles'), never the Swift runtime, so forking a process with threads is safe for
/// it. Returns the child's pid, or -1 (errno set) when the pipe or the fork fails.
pid_t gh_lv2_probe_start(const char *const *bundle_uris, int count, int *read_fd);

#endif
