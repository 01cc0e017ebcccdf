// A LADSPA library for the discovery tests, built once per fault with -DFAULT=...:
//   abort  aborts in a static constructor, when the library is opened (SIGABRT)
//   crash  writes through a null pointer when asked for its plugins (SIGSEGV)
#include <ladspa.h>
#include <stdlib.h>

#define ABORT 1
#define CRASH 2

#if FAULT == ABORT
__attribute__((constructor)) static void on_load(void) { abort(); }
#endif

const LADSPA_Descriptor *ladspa_descriptor(unsigned long index) {
    (void)index;
#if FAULT == CRASH
    *(volatile int *)0 = 1;
#endif
    return NULL;
}
