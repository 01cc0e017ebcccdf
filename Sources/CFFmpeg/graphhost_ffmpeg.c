#include "graphhost_ffmpeg.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define GH_SONAME(lib, major) "lib" #lib ".so." AV_STRINGIFY(major)

static struct {
#define GH_FFMPEG_POINTER(lib, ret, name, params, args) ret (*name) params;
    GH_FFMPEG_FUNCTIONS(GH_FFMPEG_POINTER)
#undef GH_FFMPEG_POINTER
} functions;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char failure[512];

static void load(void) {
    /* The same major versions as the headers graphhost was built with. */
    void *util = dlopen(GH_SONAME(avutil, LIBAVUTIL_VERSION_MAJOR), RTLD_NOW | RTLD_LOCAL);
    void *codec = util ? dlopen(GH_SONAME(avcodec, LIBAVCODEC_VERSION_MAJOR), RTLD_NOW | RTLD_LOCAL) : NULL;
    void *format = codec ? dlopen(GH_SONAME(avformat, LIBAVFORMAT_VERSION_MAJOR), RTLD_NOW | RTLD_LOCAL) : NULL;
    if (!format) {
        snprintf(failure, sizeof failure, "%s", dlerror());
        return;
    }
#define GH_FFMPEG_RESOLVE(lib, ret, name, params, args) \
    if (!(functions.name = (ret (*) params) dlsym(lib, #name))) { \
        snprintf(failure, sizeof failure, "%s", dlerror()); \
        return; \
    }
    GH_FFMPEG_FUNCTIONS(GH_FFMPEG_RESOLVE)
#undef GH_FFMPEG_RESOLVE
}

const char *gh_ffmpeg_load(void) {
    pthread_once(&once, load);
    return failure[0] ? failure : NULL;
}

#define GH_FFMPEG_DEFINE(lib, ret, name, params, args) \
    ret gh_##name params { \
        if (gh_ffmpeg_load()) { fprintf(stderr, "graphhost: FFmpeg is not loaded: %s\n", failure); abort(); } \
        return functions.name args; \
    }
GH_FFMPEG_FUNCTIONS(GH_FFMPEG_DEFINE)
#undef GH_FFMPEG_DEFINE
