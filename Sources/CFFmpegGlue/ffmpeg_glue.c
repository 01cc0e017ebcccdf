#include "ffmpeg_glue.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <libswresample/version.h>

#define GH_SONAME(lib, major) "lib" #lib ".so." AV_STRINGIFY(major)

static struct {
#define GH_FFMPEG_POINTER(lib, ret, name, params, args) ret (*name) params;
    GH_FFMPEG_FUNCTIONS(GH_FFMPEG_POINTER)
    GH_SWRESAMPLE_FUNCTIONS(GH_FFMPEG_POINTER)
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

static pthread_once_t resample_once = PTHREAD_ONCE_INIT;
static char resample_failure[512];

static void load_resample(void) {
    void *util = dlopen(GH_SONAME(avutil, LIBAVUTIL_VERSION_MAJOR), RTLD_NOW | RTLD_LOCAL);
    void *resample = util ? dlopen(GH_SONAME(swresample, LIBSWRESAMPLE_VERSION_MAJOR), RTLD_NOW | RTLD_LOCAL) : NULL;
    if (!resample) {
        snprintf(resample_failure, sizeof resample_failure, "%s", dlerror());
        return;
    }
#define GH_SWRESAMPLE_RESOLVE(lib, ret, name, params, args) \
    if (!(functions.name = (ret (*) params) dlsym(lib, #name))) { \
        snprintf(resample_failure, sizeof resample_failure, "%s", dlerror()); \
        return; \
    }
    GH_SWRESAMPLE_FUNCTIONS(GH_SWRESAMPLE_RESOLVE)
#undef GH_SWRESAMPLE_RESOLVE
}

const char *gh_swresample_load(void) {
    pthread_once(&resample_once, load_resample);
    return resample_failure[0] ? resample_failure : NULL;
}

#define GH_FFMPEG_DEFINE(lib, ret, name, params, args) \
    ret gh_##name params { \
        if (gh_ffmpeg_load()) { fprintf(stderr, "graphhost: FFmpeg is not loaded: %s\n", failure); abort(); } \
        return functions.name args; \
    }
GH_FFMPEG_FUNCTIONS(GH_FFMPEG_DEFINE)
#undef GH_FFMPEG_DEFINE

#define GH_SWRESAMPLE_DEFINE(lib, ret, name, params, args) \
    ret gh_##name params { \
        if (gh_swresample_load()) { fprintf(stderr, "graphhost: libswresample is not loaded: %s\n", resample_failure); abort(); } \
        return functions.name args; \
    }
GH_SWRESAMPLE_FUNCTIONS(GH_SWRESAMPLE_DEFINE)
#undef GH_SWRESAMPLE_DEFINE
