#ifndef RIPPLE_THREAD_H
#define RIPPLE_THREAD_H

#include <stdint.h>
#include <pthread.h>

/// The calling thread's thread pointer: unique among live threads, nonzero and 16-byte aligned.
///
/// Ripple's delivery turn stores who holds it on every uncontended send, so this must cost
/// next to nothing: on x86-64 and AArch64 it is one instruction (the psABI's TLS rules put the
/// thread control block's address at %fs:0 and in TPIDR_EL0); elsewhere `pthread_self()`.
/// `volatile` keeps the compiler from reusing a value across a point where a Swift task may
/// have moved to another thread.
static inline __attribute__((always_inline)) uintptr_t ripple_thread_pointer(void) {
#if defined(__x86_64__) && defined(__linux__)
    uintptr_t pointer;
    __asm__ volatile("mov %%fs:0, %0" : "=r"(pointer));
    return pointer;
#elif defined(__aarch64__) && defined(__linux__)
    uintptr_t pointer;
    __asm__ volatile("mrs %0, tpidr_el0" : "=r"(pointer));
    return pointer;
#else
    return (uintptr_t)pthread_self();
#endif
}

#endif
