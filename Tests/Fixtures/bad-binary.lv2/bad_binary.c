/* Test fixture: a plugin library with an unresolved symbol, so dlopen() fails. */
#include <lv2/core/lv2.h>
extern const LV2_Descriptor *graphhost_symbol_that_does_not_exist(uint32_t index);
LV2_SYMBOL_EXPORT const LV2_Descriptor *lv2_descriptor(uint32_t index) { return graphhost_symbol_that_does_not_exist(index); }
