/* LV2 entry point of Plugins/graphhost-ipod-eq.lv2: the descriptor forwards every callback to Swift. */
#include <lv2/core/lv2.h>
#include <stddef.h>
#if defined(__SSE__)
#include <xmmintrin.h>
#endif
#include "ipod_eq_lv2_glue.h"

static LV2_Handle instantiate(const LV2_Descriptor *descriptor, double rate, const char *bundle_path,
                              const LV2_Feature *const *features) {
    (void)descriptor; (void)bundle_path; (void)features; /* no features required */
    return gh_ipod_eq_instantiate(rate);
}

static void connect_port(LV2_Handle instance, uint32_t port, void *data) { gh_ipod_eq_connect_port(instance, port, data); }
static void activate(LV2_Handle instance) { gh_ipod_eq_activate(instance); }

/* run() with flush-to-zero and denormals-are-zero, like graphhost's render thread; the host's mode is restored. */
static void run(LV2_Handle instance, uint32_t frames) {
#if defined(__SSE__)
    unsigned int mode = _mm_getcsr();
    _mm_setcsr(mode | 0x8040);
    gh_ipod_eq_run(instance, frames);
    _mm_setcsr(mode);
#else
    gh_ipod_eq_run(instance, frames);
#endif
}

static void deactivate(LV2_Handle instance) { gh_ipod_eq_deactivate(instance); }
static void cleanup(LV2_Handle instance) { gh_ipod_eq_cleanup(instance); }
static const void *extension_data(const char *uri) { (void)uri; return NULL; }

static const LV2_Descriptor descriptor = {
    "urn:graphhost:ipod-eq", instantiate, connect_port, activate, run, deactivate, cleanup, extension_data,
};

LV2_SYMBOL_EXPORT const LV2_Descriptor *lv2_descriptor(uint32_t index) { return index == 0 ? &descriptor : NULL; }
