#ifndef MALLOC_COUNTER_H
#define MALLOC_COUNTER_H
#include <stdint.h>

/// Allocations (malloc, calloc, realloc, posix_memalign, aligned_alloc, memalign) since start.
uint64_t malloc_counter_allocations(void);
/// Bytes currently allocated through malloc, as glibc's mallinfo2 reports them.
uint64_t malloc_counter_live_bytes(void);

#endif
