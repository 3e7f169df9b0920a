// glibc's count of heap bytes in use, for the idle-subscriptions workload (RippleWorkloads).
#ifndef C_HEAP_BYTES_H
#define C_HEAP_BYTES_H
#include <malloc.h>
#include <stddef.h>

/// Bytes in blocks handed out by malloc and not yet freed (`mallinfo2().uordblks`).
static inline size_t heap_bytes_in_use(void) { return mallinfo2().uordblks; }

#endif
