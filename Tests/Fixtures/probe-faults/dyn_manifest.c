// A dynamic-manifest LV2 library for the discovery tests, built once per fault with -DFAULT=...:
//   good   describes one plugin (urn:graphhost:test:dyn-good) and notes each open in $GRAPHHOST_TEST_PROBE_LOG
//   crash  writes through a null pointer when lilv opens the manifest (SIGSEGV)
//   abort  aborts in a static constructor, when the library is loaded (SIGABRT)
//   hang   never returns from opening the manifest
//   exit   calls exit(3) when lilv asks for the plugins it describes
#include <lv2/core/lv2.h>
#include <lv2/dynmanifest/dynmanifest.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define GOOD 1
#define CRASH 2
#define ABORT 3
#define HANG 4
#define EXIT 5

#if FAULT == ABORT
__attribute__((constructor)) static void on_load(void) { abort(); }
#endif

LV2_SYMBOL_EXPORT int lv2_dyn_manifest_open(LV2_Dyn_Manifest_Handle *handle, const LV2_Feature *const *features) {
    (void)features;
    *handle = NULL;
#if FAULT == CRASH
    *(volatile int *)0 = 1;
#elif FAULT == HANG
    for (;;) pause();
#elif FAULT == GOOD
    const char *log = getenv("GRAPHHOST_TEST_PROBE_LOG");
    FILE *f = log ? fopen(log, "a") : NULL;
    if (f) {
        fprintf(f, "open %d\n", (int)getpid());
        fclose(f);
    }
#endif
    return 0;
}

LV2_SYMBOL_EXPORT int lv2_dyn_manifest_get_subjects(LV2_Dyn_Manifest_Handle handle, FILE *fp) {
    (void)handle;
#if FAULT == EXIT
    exit(3);
#endif
    fprintf(fp, "<urn:graphhost:test:dyn-good> a <http://lv2plug.in/ns/lv2core#Plugin> .\n");
    return 0;
}

LV2_SYMBOL_EXPORT int lv2_dyn_manifest_get_data(LV2_Dyn_Manifest_Handle handle, FILE *fp, const char *uri) {
    (void)handle;
    (void)uri;
    fprintf(fp,
            "@prefix lv2: <http://lv2plug.in/ns/lv2core#> .\n"
            "@prefix doap: <http://usefulinc.com/ns/doap#> .\n"
            "<urn:graphhost:test:dyn-good> a lv2:Plugin ; doap:name \"Dynamic manifest test\" ;\n"
            "  lv2:port [ a lv2:AudioPort , lv2:InputPort ; lv2:index 0 ; lv2:symbol \"in\" ; lv2:name \"In\" ] ,\n"
            "           [ a lv2:AudioPort , lv2:OutputPort ; lv2:index 1 ; lv2:symbol \"out\" ; lv2:name \"Out\" ] .\n");
    return 0;
}

LV2_SYMBOL_EXPORT void lv2_dyn_manifest_close(LV2_Dyn_Manifest_Handle handle) { (void)handle; }
