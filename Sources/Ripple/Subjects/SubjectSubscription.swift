import Synchronization

/// One subscriber of a subject, and the disposable that removes it.
///
/// Disposing removes it from the subject at once (O(1)) and, when the subscriber is a
/// `Subscriber`, disposes that too, so its closures are released even while the caller
/// still holds this disposable.
final class SubjectSubscription<Value, History: SubjectHistory>: Disposable, @unchecked Sendable
where History.Value == Value {
    let subscriber: any SubscriberProtocol<Value>
    /// The index in the subject's `SubscriberList`, or -1. Guarded by the subject's lock.
    var slot = -1
    private let ended = Atomic<Bool>(false)
    private weak var storage: SubjectStorage<Value, History>?

    init(_ subscriber: any SubscriberProtocol<Value>, storage: SubjectStorage<Value, History>) {
        self.subscriber = subscriber
        self.storage = storage
    }

    var isDisposed: Bool { ended.load(ordering: .acquiring) }

    /// Marks the subscription ended after its terminal event was delivered.
    func markEnded() { ended.store(true, ordering: .releasing) }

    func dispose() {
        if ended.exchange(true, ordering: .acquiringAndReleasing) { return }
        storage?.remove(self)
        (subscriber as? Subscriber<Value>)?.dispose()
    }
}
