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

/// A hint to the CPU that the caller is spinning (x86's `pause`, AArch64's `yield`): it saves
/// power and lets a sibling hyper-thread run while a delivery turn is awaited for a moment.
static inline __attribute__((always_inline)) void ripple_cpu_relax(void) {
#if defined(__x86_64__)
    __asm__ volatile("pause");
#elif defined(__aarch64__)
    __asm__ volatile("yield");
#endif
}

/// The calling thread's stack as `StackGuard` sees it: `low` (its lowest address), `high` (just
/// past its highest) and `water_mark` (below which it counts as near its end). All zero until
/// `StackGuard` computes them, once per thread; an unknown stack is stored as low = water_mark
/// = 0, high = 1 (every address has room). Kept in plain thread-local storage so the check on
/// every send is a few instructions: no call, no lookup, nothing to free when the thread exits.
typedef struct {
    uintptr_t low;
    uintptr_t high;
    uintptr_t water_mark;
} ripple_stack_bounds;

/// This thread's `ripple_stack_bounds` (defined in ripple_thread.c).
static inline __attribute__((always_inline)) ripple_stack_bounds *_Nonnull ripple_current_stack_bounds(void) {
    extern __thread ripple_stack_bounds ripple_stack_bounds_of_thread;
    return &ripple_stack_bounds_of_thread;
}

/// An address in the calling frame on the thread's real stack. Unlike a local variable's
/// address it is never in an AddressSanitizer "fake stack" frame on the heap (use-after-return
/// detection moves locals there), so no mapping back is needed.
static inline __attribute__((always_inline)) uintptr_t ripple_stack_pointer(void) {
#if defined(__x86_64__)
    uintptr_t pointer;
    __asm__ volatile("mov %%rsp, %0" : "=r"(pointer));
    return pointer;
#elif defined(__aarch64__)
    uintptr_t pointer;
    __asm__ volatile("mov %0, sp" : "=r"(pointer));
    return pointer;
#else
    return (uintptr_t)__builtin_frame_address(0);
#endif
}

/// `StackGuard.hasRoom`'s fast path: 1 when the calling thread's stack pointer is not within
/// the last stretch of its stack (or lies off it), 0 when it is, -1 when this thread's bounds
/// are not computed yet. One thread-local load of each bound and a compare: it runs on every
/// send and subscriber delivery.
static inline __attribute__((always_inline)) int ripple_stack_has_room(void) {
    const ripple_stack_bounds *bounds = ripple_current_stack_bounds();
    uintptr_t high = bounds->high;
    if (__builtin_expect(high == 0, 0)) return -1;
    uintptr_t here = ripple_stack_pointer();
    // Near the end iff low <= here < water_mark; off the stack (below low: wraps) has room.
    return (here - bounds->low) >= (bounds->water_mark - bounds->low);
}

/// ThreadSanitizer's `__tsan_acquire` and `__tsan_release`, when the TSan runtime is in the
/// process (looked up with `dlsym` when the library loads), else null.
///
/// Ripple's `Lock` wraps `Synchronization.Mutex`, which parks on a futex from uninstrumented
/// standard-library code: TSan cannot see that it orders memory. Each critical section calls
/// these, so a plain `swift test --sanitize=thread` (Ripple's or a user's package) sees the
/// locks without any flag. Outside TSan each costs one load and a branch not taken.
extern void (*_Nullable ripple_tsan_acquire_hook)(const void *_Nonnull address);
extern void (*_Nullable ripple_tsan_release_hook)(const void *_Nonnull address);

static inline __attribute__((always_inline)) void ripple_tsan_acquire(const void *_Nonnull address) {
    void (*hook)(const void *) = ripple_tsan_acquire_hook;
    if (__builtin_expect(hook != 0, 0)) hook(address);
}

static inline __attribute__((always_inline)) void ripple_tsan_release(const void *_Nonnull address) {
    void (*hook)(const void *) = ripple_tsan_release_hook;
    if (__builtin_expect(hook != 0, 0)) hook(address);
}

/// Whether the ThreadSanitizer runtime is in the process.
static inline __attribute__((always_inline)) int ripple_runs_under_tsan(void) { return ripple_tsan_acquire_hook != 0; }

/// Adds `delta` to the calling thread's count of held Ripple locks (kept by `Lock` in debug
/// builds) and returns the new count: the lock-discipline check asserts it is 0 wherever
/// Ripple calls user code.
long ripple_locks_held_add(long delta);

/// Whether the executor named by an `UnownedSerialExecutor`'s two words is the one the
/// calling code runs on (the main actor's, on the main thread, included). Never traps;
/// answers "no" when it cannot tell, so callers take their safe path.
_Bool ripple_is_current_executor(const void *_Nullable identity, uintptr_t implementation);

#endif
