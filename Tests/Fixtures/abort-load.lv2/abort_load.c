/* Test fixture: a library whose static constructor aborts, as a plugin built against a toolkit that cannot start
 * does, the moment a host loads it (lilv loads it only to instantiate). */
#include <lv2/core/lv2.h>
#include <stdlib.h>

__attribute__((constructor)) static void refuse_to_load(void) { abort(); }

LV2_SYMBOL_EXPORT const LV2_Descriptor *lv2_descriptor(uint32_t index) {
    (void)index;
    return NULL;
}
