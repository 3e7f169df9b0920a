import Synchronization

/// One subscriber of a subject, and the disposable that removes it.
///
/// It holds either a `SubscriberProtocol` receiver or, for `subscribe(next:error:completed:)`,
/// the closures themselves: the subject already serializes delivery, so a closure
/// subscription needs no lock of its own and a delivery is one flag check and one call.
/// The closures are read only by the thread holding the subject's delivery turn and are
/// released (`detach`) once the subscription has left the subject and no delivery can
/// reach it. Disposing removes it at once (O(1)); a `Subscriber` receiver is disposed too.
///
/// A `subscribeNext` subscription is this one allocation: the value closure is stored inline
/// (`next`), and the terminal closures take a second object only when there are any: about
/// 120 bytes per idle subscription, where an `EventCallbacks` of its own for all three would
/// take two allocations and 186 bytes.
@usableFromInline
final class SubjectSubscription<Value, History: SubjectHistory>: Disposable, @unchecked Sendable  // `next`, `terminalCallbacks` and `slot` belong to the subject's turn holder (`detach`: once no delivery can reach it); `storage` is set only in init; the rest is atomic or immutable
where History.Value == Value {
    /// The receiver, or nil for a closure subscription.
    @usableFromInline let subscriber: (any SubscriberProtocol<Value>)?
    /// The value closure of a closure subscription, until `detach` releases it.
    ///
    /// Called through an `inout` access (`invoke`), which lets the compiler borrow it in place:
    /// no retain and release of its context per delivery, as `let`s of a guaranteed object
    /// get. Sound because only the turn holder reads or writes it, and it is never written while
    /// it runs: a dispose during a delivery is deferred to the holder's next look, and the
    /// terminal event's `detach` comes after the call (`@exclusivity(unchecked)`: the turn, not
    /// the runtime, guarantees the exclusive access).
    @usableFromInline @exclusivity(unchecked) var next: ((Value) -> Void)?
    /// The error and completion closures (+1, `next` unused), or nil when the subscriber gave
    /// neither — `subscribeNext` allocates nothing more. Released by `detach`.
    @usableFromInline @exclusivity(unchecked) var terminalCallbacks: Unmanaged<EventCallbacks<Value>>?
    /// The index in the subject's `SubscriberList`, or -1. Read and written only by the thread
    /// holding the subject's delivery turn (as the list is).
    @usableFromInline @exclusivity(unchecked) var slot = -1
    @usableFromInline let ended = Atomic<Bool>(false)
    /// Whether this is a closure subscription (`subscriber` is nil).
    @usableFromInline let isClosure: Bool
    /// Written only in `init`, read by `dispose` from any thread (weak loads are atomic): no
    /// dynamic exclusivity check (`swift_beginAccess`, some 70 instructions per access).
    @usableFromInline @exclusivity(unchecked) weak var storage: SubjectStorage<Value, History>?
    /// The `RippleDebug.Scope` this subscription counts in, if any.
    @usableFromInline let debugScope: RippleDebug.Scope?

    @inlinable
    init(_ subscriber: any SubscriberProtocol<Value>, storage: SubjectStorage<Value, History>) {
        self.subscriber = subscriber
        isClosure = false
        self.storage = storage
        debugScope = RippleDebug.subscriptionCreated()
    }

    @inlinable
    init(next: ((Value) -> Void)?, error: ((any Error) -> Void)?, completed: (() -> Void)?,
         storage: SubjectStorage<Value, History>) {
        subscriber = nil
        isClosure = true
        self.next = next
        if error != nil || completed != nil {
            terminalCallbacks = Unmanaged.passRetained(EventCallbacks(next: nil, error: error, completed: completed))
        }
        self.storage = storage
        debugScope = RippleDebug.subscriptionCreated()
    }

    @inlinable
    var isDisposed: Bool { ended.load(ordering: .acquiring) }

    /// Marks the subscription ended after its terminal event was delivered.
    @inlinable
    func markEnded() { ended.store(true, ordering: .releasing) }

    /// Calls `closure` borrowed in place (see `next`).
    @inlinable @inline(__always)
    static func invoke(_ closure: inout ((Value) -> Void)?, _ value: Value) {
        closure?(value)
    }

    @inlinable
    func deliverNext(_ value: Value) {
        if isClosure {
            Self.invoke(&next, value)
        } else {
            subscriber?.sendNext(value)
        }
    }

    /// Delivers `values` in order (a late subscriber's replay; turn holder) while the
    /// subscription lasts; false when it was disposed first.
    ///
    /// A closure subscription's `next` is looked up once for the whole replay, not per value:
    /// only the turn holder — this thread, for the whole loop — releases it (`detach`; a dispose
    /// from a callback leaves that to the holder's next look), and the loop holds a reference.
    @inlinable
    func deliverEach<C: Collection>(_ values: C) -> Bool where C.Element == Value {
        if isClosure, let next {
            for value in values {
                if isDisposed { return false }
                next(value)
            }
            return true
        }
        for value in values {
            if isDisposed { return false }
            deliverNext(value)
        }
        return true
    }

    @inlinable
    func deliver(_ event: Event<Value>) {
        switch event {
        case .next(let value): deliverNext(value)
        case .error(let error):
            if isClosure { terminalCallbacks?._withUnsafeGuaranteedRef { $0.error?(error) } } else { subscriber?.sendError(error) }
        case .completed:
            if isClosure { terminalCallbacks?._withUnsafeGuaranteedRef { $0.completed?() } } else { subscriber?.sendCompleted() }
        }
    }

    /// Releases the closures (and whatever they capture). Called once no delivery can reach
    /// this subscription, outside any lock: by the subject's turn holder, or by a `deinit` (the
    /// subject's or this subscription's), when no thread can deliver to it any more.
    ///
    /// Idempotent, and that is what lets every path that ends a subscription call it without
    /// knowing what the others did: the holder detaches an entry when it leaves the list
    /// (`remove(_:)` on a free turn, a look's tidy, `endStream` after the terminal event), when
    /// it never joined (`endJoin`, or a tidy of a subscription disposed before its queued join
    /// ran), the storage's `deinit` detaches what is left, and the subscription's own `deinit`
    /// releases closures nothing detached. One subscription can meet two of
    /// them — disposed from inside its own terminal callback, it is detached by `endStream` and
    /// then by the tidy of that dispose — and the second finds nothing left to release.
    @usableFromInline
    func detach() {
        next = nil
        terminalCallbacks?.release()
        terminalCallbacks = nil
    }

    deinit {
        // The closures may hold the rest of a deep chain: release them where there is stack.
        if next != nil || terminalCallbacks != nil { StackGuard.run { detach() } }
        RippleDebug.subscriptionDestroyed(in: debugScope)
    }

    @usableFromInline
    func dispose() {
        if ended.exchange(true, ordering: .acquiringAndReleasing) { return }
        if !isClosure { (subscriber as? Subscriber<Value>)?.dispose() }
        if let storage { storage.removeEntry(storage, self) }  // specialized (see `removeEntry`)
    }
}
