#ifndef GH_ALLOCATION_COUNTER_H
#define GH_ALLOCATION_COUNTER_H
#include <stddef.h>

/// 1 when allocations are counted; 0 in a build under AddressSanitizer or ThreadSanitizer, whose allocator the
/// counter leaves alone (then nothing is counted).
int gh_allocation_counter_available(void);

/// Starts counting heap allocations made by the calling thread.
void gh_allocation_counter_begin(void);
/// Stops counting on the calling thread and returns how many allocations it made since begin.
size_t gh_allocation_counter_end(void);

/// Turns counting on (1) or off (0) for the calling thread; allocations then add to a process-wide total.
/// Its address can be handed to code under test as a probe to call on another thread.
void gh_allocation_counter_probe(int on);
/// The process-wide total counted through probes.
size_t gh_allocation_counter_probe_total(void);

#endif
