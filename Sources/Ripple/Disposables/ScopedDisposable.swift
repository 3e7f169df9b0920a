/// Disposes its inner disposable when it is deinitialized (ReactiveSwift's `ScopedDisposable`).
///
/// Keep one as a property to tie a subscription to an object's lifetime.
///
///     final class Screen {
///         let subscription: ScopedDisposable
///         init(model: Subject<String>) {
///             subscription = model.subscribeNext { print($0) }.scoped()
///         }
///     }   // the subscription ends when the screen goes away
public final class ScopedDisposable: Disposable {
    /// The disposable this one disposes.
    public let inner: any Disposable

    /// Wraps `disposable`.
    public init(_ disposable: any Disposable) {
        inner = disposable
    }

    deinit {
        inner.dispose()
    }

    /// Whether ``dispose()`` has been called.
    ///
    /// Reading it is thread-safe; once true it stays true.
    ///
    ///     let d = ActionDisposable { print("done") }.scoped()
    ///     d.isDisposed   // false
    ///     d.dispose()
    ///     d.isDisposed   // true
    public var isDisposed: Bool { inner.isDisposed }

    /// Disposes the wrapped disposable now instead of at deinit.
    ///
    /// Idempotent and thread-safe: only the first call, from any thread, does anything.
    ///
    ///     let d = ActionDisposable { print("done") }.scoped()
    ///     d.dispose()    // the work happens once
    ///     d.dispose()    // nothing
    public func dispose() { inner.dispose() }
}
