#ifndef GRAPHHOST_ALLOCATION_COUNTER_H
#define GRAPHHOST_ALLOCATION_COUNTER_H
#include <stddef.h>

/// Starts counting heap allocations made by the calling thread.
void allocation_counter_begin(void);
/// Stops counting on the calling thread and returns how many allocations it made since begin.
size_t allocation_counter_end(void);

#endif
