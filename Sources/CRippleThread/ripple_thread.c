// The C target: the thread pointer (inline, in include/ripple_thread.h), the ThreadSanitizer
// hooks found at load time, the per-thread stack bounds of StackGuard, and the per-thread count of
// held Ripple locks.
#define _GNU_SOURCE
#include <dlfcn.h>
#include "ripple_thread.h"

void (*ripple_tsan_acquire_hook)(const void *) = 0;
void (*ripple_tsan_release_hook)(const void *) = 0;

/// Runs when the library loads, before any Swift code: the TSan runtime, if linked into the
/// process, exports both functions; both or neither are used.
__attribute__((constructor)) static void ripple_find_tsan(void) {
    void *acquire = dlsym(RTLD_DEFAULT, "__tsan_acquire");
    void *release = dlsym(RTLD_DEFAULT, "__tsan_release");
    if (acquire && release) {
        ripple_tsan_acquire_hook = (void (*)(const void *))acquire;
        ripple_tsan_release_hook = (void (*)(const void *))release;
    }
}

__thread ripple_stack_bounds ripple_stack_bounds_of_thread = {0, 0, 0};

static __thread long locks_held = 0;

long ripple_locks_held_add(long delta) {
    locks_held += delta;
    return locks_held;
}

/// LeakSanitizer's built-in suppressions for a process that links Ripple (LSan calls this at
/// start; its own default returns nothing). Only what is not Ripple's, so that a plain
/// `swift test --sanitize=address` of Ripple or of a package using it needs no file:
/// - `formWeakReference`: Swift keeps a weak-reference side table's address in the object's
///   refcount word, shifted and tagged, so LSan cannot see that the live object points to it and
///   reports every side table of an object alive at exit as a direct leak.
/// - `libXCTest.so`: XCTest's harness keeps its suite objects in a cycle.
/// - `readBytesFromFile`: FoundationEssentials' file reader lost its 4 KiB buffer while reading
///   /proc/PID/stat of an exiting child.
/// - `libFoundationXML.so`, `libxml2.so`: FoundationXML's `XMLNode` and its libxml2 node point
///   at each other (the node's `_private`), so every document a program parsed — the playground's
///   picture tests parse each SVG — is reported at exit.
/// Weak, so a program that defines this function itself links and replaces these (it should
/// list them too).
__attribute__((weak)) const char *__lsan_default_suppressions(void) {
    return "leak:formWeakReference\nleak:libXCTest.so\nleak:readBytesFromFile\n"
           "leak:libFoundationXML.so\nleak:libxml2.so\n";
}

/// The Swift runtime's non-trapping "is this executor the current one?" check, which
/// `Task.immediate` uses too (Swift 6.3 has no public, non-trapping form). Called with the
/// two words of an `UnownedSerialExecutor`; flags 0 = neither assert nor call a custom
/// executor's trapping `checkIsolated`. Referenced directly (linked like any Swift program's
/// runtime, static stdlib included) but weakly: a runtime before 6.2 lacks the flags variant,
/// and then the older `swift_task_isCurrentExecutor` answers. Declared here, not in the
/// header, so Swift code never sees a second declaration of a runtime function.
extern _Bool swift_task_isCurrentExecutorWithFlags(const void *, uintptr_t, uint64_t)
    __attribute__((swiftcall, weak));
extern _Bool swift_task_isCurrentExecutor(const void *, uintptr_t)
    __attribute__((swiftcall, weak));

_Bool ripple_is_current_executor(const void *identity, uintptr_t implementation) {
    if (swift_task_isCurrentExecutorWithFlags) {
        return swift_task_isCurrentExecutorWithFlags(identity, implementation, 0);
    }
    if (swift_task_isCurrentExecutor) {
        return swift_task_isCurrentExecutor(identity, implementation);
    }
    return 0;
}
