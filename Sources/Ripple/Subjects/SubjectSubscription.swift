import Synchronization

/// One subscriber of a subject, and the disposable that removes it.
///
/// It holds either a `SubscriberProtocol` receiver or, for `subscribe(next:error:completed:)`,
/// the closures themselves: the subject already serializes delivery, so a closure
/// subscription needs no lock of its own and a delivery is one flag check and one call.
/// The closures are read only by the thread holding the subject's delivery turn and are
/// released (`detach`) once the subscription has left the subject and no delivery can
/// reach it. Disposing removes it at once (O(1)); a `Subscriber` receiver is disposed too.
@usableFromInline
final class SubjectSubscription<Value, History: SubjectHistory>: Disposable, @unchecked Sendable  // `callbacks` and `slot` belong to the subject's turn holder (`detach`: once no delivery can reach it); `storage` is set only in init; the rest is atomic or immutable
where History.Value == Value {
    /// The receiver, or nil for a closure subscription.
    @usableFromInline let subscriber: (any SubscriberProtocol<Value>)?
    /// The closures, owned (+1) until `detach` releases them. Unmanaged so the delivery path
    /// calls them without a retain/release pair; `detach` runs only once no delivery can
    /// reach this subscription.
    @usableFromInline @exclusivity(unchecked) var callbacks: Unmanaged<EventCallbacks<Value>>?
    /// The index in the subject's `SubscriberList`, or -1. Read and written only by the thread
    /// holding the subject's delivery turn (as the list is).
    @usableFromInline @exclusivity(unchecked) var slot = -1
    @usableFromInline let ended = Atomic<Bool>(false)
    @usableFromInline weak var storage: SubjectStorage<Value, History>?
    /// The `RippleDebug.Scope` this subscription counts in, if any.
    @usableFromInline let debugScope: RippleDebug.Scope?

    @inlinable
    init(_ subscriber: any SubscriberProtocol<Value>, storage: SubjectStorage<Value, History>) {
        self.subscriber = subscriber
        self.storage = storage
        debugScope = RippleDebug.subscriptionCreated()
    }

    @inlinable
    init(next: ((Value) -> Void)?, error: ((any Error) -> Void)?, completed: (() -> Void)?,
         storage: SubjectStorage<Value, History>) {
        subscriber = nil
        callbacks = Unmanaged.passRetained(EventCallbacks(next: next, error: error, completed: completed))
        self.storage = storage
        debugScope = RippleDebug.subscriptionCreated()
    }

    @inlinable
    var isDisposed: Bool { ended.load(ordering: .acquiring) }

    /// Marks the subscription ended after its terminal event was delivered.
    @inlinable
    func markEnded() { ended.store(true, ordering: .releasing) }

    @inlinable
    func deliverNext(_ value: Value) {
        if let callbacks {
            callbacks._withUnsafeGuaranteedRef { $0.next?(value) }
        } else {
            subscriber?.sendNext(value)
        }
    }

    @inlinable
    func deliver(_ event: Event<Value>) {
        switch event {
        case .next(let value): deliverNext(value)
        case .error(let error):
            if let callbacks { callbacks._withUnsafeGuaranteedRef { $0.error?(error) } } else { subscriber?.sendError(error) }
        case .completed:
            if let callbacks { callbacks._withUnsafeGuaranteedRef { $0.completed?() } } else { subscriber?.sendCompleted() }
        }
    }

    /// Releases the closures (and whatever they capture). Called once no delivery can reach
    /// this subscription, outside any lock.
    @usableFromInline
    func detach() {
        callbacks?.release()
        callbacks = nil
    }

    deinit {
        if let callbacks { StackGuard.run { callbacks.release() } }
        RippleDebug.subscriptionDestroyed(in: debugScope)
    }

    @usableFromInline
    func dispose() {
        if ended.exchange(true, ordering: .acquiringAndReleasing) { return }
        (subscriber as? Subscriber<Value>)?.dispose()
        storage?.remove(self)
    }
}
