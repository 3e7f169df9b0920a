/// Something that can be cancelled: a subscription, a scheduled action, a resource.
///
/// `dispose()` is idempotent and thread-safe; whatever it releases is released once.
///
///     let d = signal.subscribeNext { print($0) }
///     d.dispose()
///     d.isDisposed   // true
public protocol Disposable: AnyObject, Sendable {
    /// Whether `dispose()` has been called (or the work ended by itself).
    var isDisposed: Bool { get }
    /// Cancels the work and releases its resources; later calls do nothing.
    func dispose()
}

extension Disposable {
    /// Adds `self` to `compound`, so disposing the compound disposes `self`.
    ///
    ///     let bag = CompoundDisposable()
    ///     signal.subscribeNext { print($0) }.disposed(by: bag)
    @discardableResult
    public func disposed(by compound: CompoundDisposable) -> Self {
        compound.add(self)
        return self
    }

    /// Wraps `self` in a `ScopedDisposable` that disposes it when deinitialized.
    ///
    ///     let scoped = signal.subscribeNext { print($0) }.scoped()   // lives as long as `scoped`
    public func scoped() -> ScopedDisposable {
        ScopedDisposable(self)
    }
}

/// A disposable that is disposed from the start; returned for work that already ran.
final class DisposedDisposable: Disposable {
    static let shared = DisposedDisposable()
    var isDisposed: Bool { true }
    func dispose() {}
}
