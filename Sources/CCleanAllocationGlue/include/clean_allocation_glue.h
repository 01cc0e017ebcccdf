#ifndef GH_CLEAN_ALLOCATION_GLUE_H
#define GH_CLEAN_ALLOCATION_GLUE_H
#include <stddef.h>

/// While on (1), heap memory the calling thread allocates arrives zeroed, as calloc's does. The LV2 host turns it on
/// from instantiate to activate: plugins that leave part of their state uninitialized (swh's zero their filter
/// memory in locals) then start from zeros in every host and every run, instead of from whatever the heap held.
void gh_zero_new_memory(int on);

/// Zeroes `size` bytes at `memory` when the calling thread asked for zeroed memory; the allocator interposers call it.
void gh_clean_allocation(void *memory, size_t size);

#endif
