// A LADSPA library for the tests, built once per fault with -DFAULT=...:
//   abort  aborts in a static constructor, when the library is opened (SIGABRT)
//   crash  writes through a null pointer when asked for its plugins (SIGSEGV)
//   nan    holds one plugin, label "nan" (1 in, 1 out), that writes NaN from its 10th run on
#include <ladspa.h>
#include <stdlib.h>

#define ABORT 1
#define CRASH 2
#define NAN_OUT 3

#if FAULT == ABORT
__attribute__((constructor)) static void on_load(void) { abort(); }
#endif

#if FAULT == NAN_OUT
#include <math.h>

typedef struct {
    LADSPA_Data *in, *out;
    int runs;
} nan_plugin;

static LADSPA_Handle nan_instantiate(const LADSPA_Descriptor *d, unsigned long rate) {
    (void)d;
    (void)rate;
    return calloc(1, sizeof(nan_plugin));
}

static void nan_connect(LADSPA_Handle h, unsigned long port, LADSPA_Data *data) {
    nan_plugin *p = h;
    if (port == 0) p->in = data;
    else p->out = data;
}

static void nan_run(LADSPA_Handle h, unsigned long frames) {
    nan_plugin *p = h;
    p->runs++;
    for (unsigned long i = 0; i < frames; i++) p->out[i] = p->runs >= 10 ? NAN : p->in[i];
}

static void nan_cleanup(LADSPA_Handle h) { free(h); }

static const LADSPA_PortDescriptor nan_ports[] = {LADSPA_PORT_INPUT | LADSPA_PORT_AUDIO,
                                                  LADSPA_PORT_OUTPUT | LADSPA_PORT_AUDIO};
static const char *const nan_names[] = {"Input", "Output"};
static const LADSPA_PortRangeHint nan_hints[] = {{0, 0, 0}, {0, 0, 0}};
static const LADSPA_Descriptor nan_descriptor = {
    .UniqueID = 4242001, .Label = "nan", .Name = "NaN after nine runs", .Maker = "graphhost tests",
    .Copyright = "none", .PortCount = 2, .PortDescriptors = nan_ports, .PortNames = nan_names,
    .PortRangeHints = nan_hints, .instantiate = nan_instantiate, .connect_port = nan_connect, .run = nan_run,
    .cleanup = nan_cleanup,
};
#endif

const LADSPA_Descriptor *ladspa_descriptor(unsigned long index) {
    (void)index;
#if FAULT == CRASH
    *(volatile int *)0 = 1;
#endif
#if FAULT == NAN_OUT
    if (index == 0) return &nan_descriptor;
#endif
    return NULL;
}
