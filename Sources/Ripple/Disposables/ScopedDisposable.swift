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

    public var isDisposed: Bool { inner.isDisposed }

    public func dispose() { inner.dispose() }
}
