#define _GNU_SOURCE
#include "plugin_probe_glue.h"

#include <dlfcn.h>

#include <fcntl.h>
#include <lilv/lilv.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

static void say(int fd, const char *what, int index) {
    char line[48];
    int n = snprintf(line, sizeof line, "\001%s %d\n", what, index);
    if (n > 0) (void)!write(fd, line, (size_t)n);
}

/// Loads one bundle and reads its plugins' data, which for a dynamic manifest runs the bundle's library.
static void probe_bundle(LilvWorld *world, const char *bundle_uri) {
    LilvNode *bundle = lilv_new_uri(world, bundle_uri);
    if (!bundle) return;
    lilv_world_load_bundle(world, bundle);
    const LilvPlugins *plugins = lilv_world_get_all_plugins(world);
    LILV_FOREACH (plugins, i, plugins) {
        const LilvPlugin *plugin = lilv_plugins_get(plugins, i);
        if (!lilv_node_equals(lilv_plugin_get_bundle_uri(plugin), bundle)) continue;
        LilvNode *name = lilv_plugin_get_name(plugin);
        lilv_node_free(name);
        (void)lilv_plugin_get_num_ports(plugin);
    }
    lilv_node_free(bundle);
}

/// Opens a LADSPA library (running its constructors) and asks it for each of its plugins.
static void probe_library(const char *path) {
    void *library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!library) return;
    typedef const void *(*descriptor_function)(unsigned long);
    descriptor_function list = (descriptor_function)dlsym(library, "ladspa_descriptor");
    for (unsigned long i = 0; list && list(i); i++) {}
}

pid_t gh_probe_start(gh_probe_kind kind, const char *const *items, int count, int *read_fd) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return -1;
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (pid > 0) {
        close(fds[1]);
        *read_fd = fds[0];
        return pid;
    }
    // The child: it dies with the parent, and faults end it as they would end a host (default dispositions, no
    // signal blocked).
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    for (int s = 1; s < NSIG; s++) signal(s, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    close(fds[0]);
    dup2(fds[1], STDOUT_FILENO);
    dup2(fds[1], STDERR_FILENO);
    LilvWorld *world = kind == GH_PROBE_LV2_BUNDLES ? lilv_world_new() : NULL;
    for (int i = 0; i < count; i++) {
        say(fds[1], "start", i);
        if (world) probe_bundle(world, items[i]);
        else probe_library(items[i]);
        say(fds[1], "done", i);
    }
    _exit(0);
}
