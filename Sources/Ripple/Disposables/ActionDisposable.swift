import Synchronization

/// Runs an action once, on the first `dispose()` (RAC's `RACDisposable`, SwiftSignalKit's `ActionDisposable`).
///
/// Later calls, from any thread, do nothing; the action is released after it runs. Unlike
/// SwiftSignalKit, deinitializing an undisposed `ActionDisposable` does not run the action:
/// wrap it in `scoped()` for that.
///
///     let d = ActionDisposable { print("cancelled") }
///     d.dispose()   // prints "cancelled"
///     d.dispose()   // nothing
public final class ActionDisposable: Disposable, Sendable {
    /// Guarded by `state`; nil once disposed.
    private struct State: @unchecked Sendable {  // the action (not `Sendable`: public API) leaves the lock once, so it runs at most once, on the first disposing thread
        var action: (() -> Void)?
        var isDisposed = false
    }

    private let state: Lock<State>

    /// Creates a disposable that runs `action` when first disposed.
    public init(_ action: @escaping () -> Void) {
        state = Lock(State(action: action))
    }

    /// Creates a disposable with no action: a cancellation flag.
    public init() {
        state = Lock(State(action: nil))
    }

    /// Whether ``dispose()`` has been called.
    ///
    /// Reading it is thread-safe; once true it stays true.
    ///
    ///     let d = ActionDisposable { print("cancelled") }
    ///     d.isDisposed   // false
    ///     d.dispose()
    ///     d.isDisposed   // true
    public var isDisposed: Bool {
        state.withLock { $0.isDisposed }
    }

    /// Runs the action, once, and releases it.
    ///
    /// Idempotent and thread-safe: only the first call, from any thread, does anything.
    ///
    ///     let d = ActionDisposable { print("cancelled") }
    ///     d.dispose()    // the work happens once
    ///     d.dispose()    // nothing
    public func dispose() {
        let action: (() -> Void)? = state.withLock { state in
            if state.isDisposed { return nil }
            state.isDisposed = true
            defer { state.action = nil }
            return state.action
        }
        action?()
    }
}

/// A cancellation flag for scheduled work: one atomic, no closure.
final class CancellationFlag: Disposable {
    private let flag = Atomic<Bool>(false)
    var isDisposed: Bool { flag.load(ordering: .acquiring) }
    func dispose() { flag.store(true, ordering: .releasing) }
}
