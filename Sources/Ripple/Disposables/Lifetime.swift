/// When an owner's life ends (ReactiveSwift's `Lifetime`).
///
/// `Lifetime.make()` returns a lifetime and its token; the lifetime ends when the token is
/// deinitialized (keep it as a property of the owner) or `end()`ed. Work observing it ends
/// then: `take(during:)` completes, `observeEnded` actions run.
///
///     final class Screen {
///         private let token: Lifetime.Token
///         let lifetime: Lifetime
///         init(updates: Subject<String>) {
///             (lifetime, token) = Lifetime.make()
///             updates.take(during: lifetime).subscribeNext { print($0) }
///         }
///     }   // the subscription completes when the screen is freed
public final class Lifetime: Sendable {
    /// Ends its lifetime when deinitialized.
    public final class Token: Sendable {
        fileprivate let ended = CompoundDisposable()

        /// Ends the lifetime now (it also ends when the token is deinitialized).
        public func end() { ended.dispose() }

        deinit { ended.dispose() }
    }

    private let ended: CompoundDisposable

    private init(_ ended: CompoundDisposable) {
        self.ended = ended
    }

    /// A new lifetime and the token that ends it.
    public static func make() -> (lifetime: Lifetime, token: Token) {
        let token = Token()
        return (Lifetime(token.ended), token)
    }

    /// A lifetime that has already ended.
    public static let empty: Lifetime = {
        let (lifetime, token) = make()
        token.end()
        return lifetime
    }()

    /// Whether the lifetime has ended.
    public var hasEnded: Bool { ended.isDisposed }

    /// Runs `action` when the lifetime ends (at once if it has). Disposing the result
    /// cancels the action.
    @discardableResult
    public func observeEnded(_ action: @escaping () -> Void) -> any Disposable {
        let observer = ActionDisposable(action)
        if ended.add(observer) {
            return ActionDisposable { [ended] in ended.remove(observer) }
        }
        return DisposedDisposable.shared
    }
}
