import Foundation

/// A value behind an `NSLock`, which ThreadSanitizer understands (a pthread mutex); used here
/// instead of Synchronization's `Mutex`, whose futex it does not see.
///
/// On Linux, `Mutex` parks contending threads on a futex inside the uninstrumented standard
/// library, so under `--sanitize=thread` a contended hand-over orders nothing TSan can see and
/// it reports the guarded state as raced. Test code shared between threads uses this instead.
public final class Locked<State>: @unchecked Sendable {
    // @unchecked: `state` is read and written only inside `lock`.
    private let lock = NSLock()
    private var state: State

    public init(_ state: State) { self.state = state }

    public func withLock<R>(_ body: (inout State) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body(&state)
    }
}
