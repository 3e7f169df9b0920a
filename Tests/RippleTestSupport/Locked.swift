import Foundation

/// A value behind an `NSLock`, which ThreadSanitizer understands (a pthread mutex); test code
/// shared between threads uses it instead of Synchronization's `Mutex`.
///
/// On Linux, `Mutex` inlines only its fast path (one compare-and-swap); an acquisition that finds
/// it held goes through its slow path (a spin, then `FUTEX_LOCK_PI`) in the uninstrumented
/// standard library. Under `--sanitize=thread` such an acquisition orders nothing TSan can see,
/// so it may report the guarded state as raced.
///
///     let seen = Locked<[Int]>([])
///     seen.withLock { $0.append(1) }
public final class Locked<State: Sendable>: @unchecked Sendable {  // `state` is read and written only inside `lock`
    private let lock = NSLock()
    private var state: State

    public init(_ state: State) { self.state = state }

    /// Runs `body` with exclusive access to the state and returns its result.
    public func withLock<R>(_ body: (inout State) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body(&state)
    }
}
