import CRippleThread
import Synchronization

/// One `Mutex` guarding one `State` struct: the only lock type Ripple uses.
///
/// It is `Synchronization.Mutex` with two additions.
///
/// - ThreadSanitizer: on Linux, `Mutex` parks on a futex from uninstrumented standard-library
///   code, so TSan cannot see that it orders memory and would report every guarded access as a
///   race. When the TSan runtime is in the process (found at load time, no flag needed: a
///   user's `swift test --sanitize=thread` gets it too), each critical section tells TSan it
///   acquires and releases the mutex (`ripple_tsan_acquire`); otherwise that is one load and a
///   branch not taken.
/// - Lock discipline, in debug builds: each critical section counts itself on the thread, and
///   every place Ripple calls user code checks the count is 0 (`RippleDebug.checkNoLockHeld`),
///   so user code under a Ripple lock stops with a message naming the call.
///
/// `State` is `Sendable`: proven by the compiler where its fields are, else (it holds values of
/// a generic, possibly non-`Sendable` type) marked `@unchecked` with the reason on the
/// same line — it never leaves the lock except as values the owner hands out deliberately.
/// Never call user code inside `withLock`: decide under the lock, act after it. Inlinable, so
/// clients specialize it.
@usableFromInline
struct Lock<State: Sendable>: ~Copyable, Sendable {
    @usableFromInline let mutex: Mutex<State>

    @inlinable
    init(_ initial: State) {
        mutex = Mutex(initial)
    }

    /// Runs `body` with exclusive access to the state and returns its result.
    @inlinable @inline(__always)
    borrowing func withLock<Result>(_ body: (inout State) -> Result) -> Result {
        mutex.withLock { state in
            // The mutex's address names the lock for TSan (the `inout` state may be a temporary):
            // each call is one load and a branch not taken when TSan is absent. `body` cannot throw.
            withUnsafePointer(to: mutex) { ripple_tsan_acquire($0) }
            #if DEBUG
            _ = ripple_locks_held_add(1)
            defer { _ = ripple_locks_held_add(-1) }
            #endif
            let result = body(&state)
            withUnsafePointer(to: mutex) { ripple_tsan_release($0) }
            return result
        }
    }
}
