import Synchronization

#if RIPPLE_TSAN
@usableFromInline @_silgen_name("__tsan_acquire") func tsanAcquire(_ address: UnsafeRawPointer)
@usableFromInline @_silgen_name("__tsan_release") func tsanRelease(_ address: UnsafeRawPointer)
#endif

/// One `Mutex` guarding one `State` struct: the only lock type Ripple uses.
///
/// It is `Synchronization.Mutex` with one addition. On Linux, `Mutex` parks on a futex
/// from uninstrumented standard-library code, so ThreadSanitizer cannot see that it orders
/// memory and reports every guarded access as a race. Built with `-DRIPPLE_TSAN` (as
/// `.ci/run` does for its `--sanitize=thread` pass), each critical section tells TSan it
/// acquires and releases the mutex; other builds compile to the plain `Mutex`.
///
/// `State` is `Sendable` (each owner marks its state `@unchecked Sendable`: it never leaves
/// the lock except as values the owner hands out deliberately). Never call user code inside
/// `withLock`: decide under the lock, act after it. Inlinable, so clients specialize it.
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
        var result: Result?
        mutex.withLock { state in
            #if RIPPLE_TSAN
            withUnsafePointer(to: mutex) { tsanAcquire($0) }
            defer { withUnsafePointer(to: mutex) { tsanRelease($0) } }
            #endif
            result = body(&state)
        }
        return result.unsafelyUnwrapped
    }
}
