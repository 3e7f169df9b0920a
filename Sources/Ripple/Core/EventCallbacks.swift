/// The closures of a closure subscription, immutable so a delivery calls them without
/// retaining anything (held `Unmanaged` by `Subscriber` and subject subscriptions).
@usableFromInline
final class EventCallbacks<Value> {
    @usableFromInline let next: ((Value) -> Void)?
    @usableFromInline let error: ((any Error) -> Void)?
    @usableFromInline let completed: (() -> Void)?

    @inlinable
    init(next: ((Value) -> Void)?, error: ((any Error) -> Void)?, completed: (() -> Void)?) {
        self.next = next
        self.error = error
        self.completed = completed
    }
}
