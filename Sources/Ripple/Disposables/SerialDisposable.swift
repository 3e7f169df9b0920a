

/// Holds one replaceable disposable (RAC's `RACSerialDisposable`, SwiftSignalKit's `MetaDisposable`).
///
/// Setting `disposable` disposes the one it replaces; `swap(_:)` hands the previous one
/// back without disposing it. Once the serial disposable is disposed, anything set or
/// swapped in is disposed at once.
///
///     let current = SerialDisposable()
///     current.disposable = request(1)   // starts request 1
///     current.disposable = request(2)   // disposes request 1
///     current.dispose()                 // disposes request 2
public final class SerialDisposable: Disposable, Sendable {
    private struct State {
        var current: (any Disposable)?
        var isDisposed = false
    }

    private let state: Lock<State>

    /// Creates a serial disposable holding `disposable`.
    public init(_ disposable: (any Disposable)? = nil) {
        state = Lock(State(current: disposable))
    }

    /// Whether ``dispose()`` has been called.
    ///
    /// Reading it is thread-safe; once true it stays true.
    ///
    ///     let d = SerialDisposable(ActionDisposable { print("request cancelled") })
    ///     d.isDisposed   // false
    ///     d.dispose()
    ///     d.isDisposed   // true
    public var isDisposed: Bool {
        state.withLock { $0.isDisposed }
    }

    /// The held disposable; setting it disposes the previous one.
    public var disposable: (any Disposable)? {
        get { state.withLock { $0.current } }
        set { swap(newValue)?.dispose() }
    }

    /// SwiftSignalKit's `MetaDisposable.set(_:)`: the same as assigning `disposable`.
    public func set(_ disposable: (any Disposable)?) {
        self.disposable = disposable
    }

    /// Replaces the held disposable and returns the previous one, not disposed.
    ///
    /// After `dispose()`, `disposable` is disposed at once and nil is returned.
    @discardableResult
    public func swap(_ disposable: (any Disposable)?) -> (any Disposable)? {
        let (previous, rejected): ((any Disposable)?, Bool) = state.withLock { state in
            if state.isDisposed { return (nil, true) }
            defer { state.current = disposable }
            return (state.current, false)
        }
        if rejected { disposable?.dispose() }
        return previous
    }

    /// Disposes the held disposable, and any set afterwards at once.
    ///
    /// Idempotent and thread-safe: only the first call, from any thread, does anything.
    ///
    ///     let d = SerialDisposable(ActionDisposable { print("request cancelled") })
    ///     d.dispose()    // the work happens once
    ///     d.dispose()    // nothing
    public func dispose() {
        let current: (any Disposable)? = state.withLock { state in
            if state.isDisposed { return nil }
            state.isDisposed = true
            defer { state.current = nil }
            return state.current
        }
        current?.dispose()
    }
}
