import Synchronization

/// One subscriber of a subject, and the disposable that removes it.
///
/// Two kinds share this base: a `ClosureSubscription` holds the closures of
/// `subscribe(next:error:completed:)` themselves — the subject already serializes delivery, so a
/// closure subscription needs no lock of its own and a delivery is one flag check and one call —
/// and a `ReceiverSubscription` holds a `SubscriberProtocol` receiver. The closures are read only
/// by the thread holding the subject's delivery turn and are released (`detach`) once the
/// subscription has left the subject and no delivery can reach it. Disposing removes it at once
/// (O(1)); a `Subscriber` receiver is disposed too.
///
/// Sized for a subject holding many idle subscriptions: either kind is 56 bytes, one 64-byte heap
/// block (a receiver is a class-bound existential, 16 bytes like the closure). What
/// most subscriptions do not have — terminal closures, a `RippleDebug.Scope` — lives in a second
/// object (`extras`) made only when there is any, the slot is 32 bits, and the two kinds are
/// subclasses rather than one class with a field for each (an enum of the two would need a tag
/// word: a function pointer and a witness table have no spare bits to hold it).
@usableFromInline
class SubjectSubscription<Value, History: SubjectHistory>: Disposable, @unchecked Sendable  // `extras`' closures and `slot` belong to the subject's turn holder (`detach`: once no delivery can reach it); `storage` is set only in init; the rest is atomic or immutable
where History.Value == Value {
    /// Written only in `init`, read by `dispose` from any thread (weak loads are atomic): no
    /// dynamic exclusivity check (`swift_beginAccess`, some 70 instructions per access).
    @usableFromInline @exclusivity(unchecked) final weak var storage: SubjectStorage<Value, History>?
    /// The terminal closures and the debug scope (+1), or nil when there are neither —
    /// `subscribeNext` outside a `RippleDebug.Scope` allocates nothing more. Released by `deinit`;
    /// `detach` empties its closures.
    @usableFromInline final let extras: Unmanaged<SubscriptionExtras<Value>>?
    /// The index in the subject's `SubscriberList`, or -1. Read and written only by the thread
    /// holding the subject's delivery turn (as the list is).
    @usableFromInline @exclusivity(unchecked) final var slot: Int32 = -1
    @usableFromInline final let ended = Atomic<Bool>(false)
    /// Whether this is a `ClosureSubscription` (else a `ReceiverSubscription`).
    @usableFromInline final let isClosure: Bool

    @inlinable
    init(isClosure: Bool, error: ((any Error) -> Void)?, completed: (() -> Void)?,
         storage: SubjectStorage<Value, History>) {
        self.isClosure = isClosure
        let scope = RippleDebug.subscriptionCreated()
        extras = error != nil || completed != nil || scope != nil
            ? Unmanaged.passRetained(SubscriptionExtras(error: error, completed: completed, debugScope: scope))
            : nil
        self.storage = storage
        assert(isClosure == (self is ClosureSubscription<Value, History>), "Ripple: a subject subscription of the wrong kind")
    }

    @inlinable
    final var isDisposed: Bool { ended.load(ordering: .acquiring) }

    /// Marks the subscription ended after its terminal event was delivered.
    @inlinable
    final func markEnded() { ended.store(true, ordering: .releasing) }

    /// This subscription as the closure kind (`isClosure` must be true).
    @inlinable @inline(__always)
    final var asClosure: ClosureSubscription<Value, History> {
        unsafeDowncast(self, to: ClosureSubscription<Value, History>.self)
    }

    /// This subscription as the receiver kind (`isClosure` must be false).
    @inlinable @inline(__always)
    final var asReceiver: ReceiverSubscription<Value, History> {
        unsafeDowncast(self, to: ReceiverSubscription<Value, History>.self)
    }

    /// Calls `closure` borrowed in place (see `ClosureSubscription.next`).
    @inlinable @inline(__always)
    static func invoke(_ closure: inout ((Value) -> Void)?, _ value: Value) {
        closure?(value)
    }

    @inlinable
    final func deliverNext(_ value: Value) {
        if isClosure {
            let closure = asClosure
            Self.invoke(&closure.next, value)
        } else {
            asReceiver.subscriber.sendNext(value)
        }
    }

    /// Delivers `values` in order (a late subscriber's replay; turn holder) while the
    /// subscription lasts; false when it was disposed first.
    ///
    /// A closure subscription's `next` is looked up once for the whole replay, not per value:
    /// only the turn holder — this thread, for the whole loop — releases it (`detach`; a dispose
    /// from a callback leaves that to the holder's next look), and the loop holds a reference.
    @inlinable
    final func deliverEach<C: Collection>(_ values: C) -> Bool where C.Element == Value {
        if isClosure, let next = asClosure.next {
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
    final func deliver(_ event: Event<Value>) {
        switch event {
        case .next(let value): deliverNext(value)
        case .error(let error):
            if isClosure { extras?._withUnsafeGuaranteedRef { $0.error?(error) } } else { asReceiver.subscriber.sendError(error) }
        case .completed:
            if isClosure { extras?._withUnsafeGuaranteedRef { $0.completed?() } } else { asReceiver.subscriber.sendCompleted() }
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
    @inlinable
    final func detach() {
        if isClosure { asClosure.next = nil }
        extras?._withUnsafeGuaranteedRef { $0.releaseClosures() }
    }

    /// Whether `detach` has something left to release.
    @inlinable
    final var holdsClosures: Bool {
        (isClosure && asClosure.next != nil) || (extras?._withUnsafeGuaranteedRef { $0.holdsClosures } ?? false)
    }

    deinit {
        // The closures may hold the rest of a deep chain: release them where there is stack.
        // (A `ClosureSubscription`'s `next` is still there: a class's own deinit body runs
        // before any stored property, its subclasses' included, is destroyed.)
        if holdsClosures { StackGuard.run { detach() } }
        if let extras {
            RippleDebug.subscriptionDestroyed(in: extras._withUnsafeGuaranteedRef { $0.debugScope })
            extras.release()
        } else {
            RippleDebug.subscriptionDestroyed(in: nil)
        }
    }

    /// Ends a receiver that is a `Subscriber` (its cleanup runs); nothing for a closure subscription.
    @inlinable
    final func disposeReceiver() {
        if !isClosure { (asReceiver.subscriber as? Subscriber<Value>)?.dispose() }
    }

    @usableFromInline
    final func dispose() {
        if ended.exchange(true, ordering: .acquiringAndReleasing) { return }
        disposeReceiver()
        if let storage { storage.removeEntry(storage, self) }  // specialized (see `removeEntry`)
    }
}

/// A subject subscription made by `subscribe(next:error:completed:)`: the value closure inline.
@usableFromInline
final class ClosureSubscription<Value, History: SubjectHistory>: SubjectSubscription<Value, History>, @unchecked Sendable  // as its base: `next` belongs to the subject's turn holder
where History.Value == Value {
    /// The value closure, until `detach` releases it.
    ///
    /// Called through an `inout` access (`invoke`), which lets the compiler borrow it in place:
    /// no retain and release of its context per delivery, as `let`s of a guaranteed object
    /// get. Sound because only the turn holder reads or writes it, and it is never written while
    /// it runs: a dispose during a delivery is deferred to the holder's next look, and the
    /// terminal event's `detach` comes after the call (`@exclusivity(unchecked)`: the turn, not
    /// the runtime, guarantees the exclusive access).
    @usableFromInline @exclusivity(unchecked) var next: ((Value) -> Void)?

    @inlinable
    init(next: ((Value) -> Void)?, error: ((any Error) -> Void)?, completed: (() -> Void)?,
         storage: SubjectStorage<Value, History>) {
        self.next = next
        super.init(isClosure: true, error: error, completed: completed, storage: storage)
    }
}

/// A subject subscription made by `subscribe(_:)`: a `SubscriberProtocol` receiver.
@usableFromInline
final class ReceiverSubscription<Value, History: SubjectHistory>: SubjectSubscription<Value, History>, @unchecked Sendable  // as its base; `subscriber` is immutable
where History.Value == Value {
    /// The receiver, for as long as the subscription lives.
    @usableFromInline let subscriber: any SubscriberProtocol<Value>

    @inlinable
    init(_ subscriber: any SubscriberProtocol<Value>, storage: SubjectStorage<Value, History>) {
        self.subscriber = subscriber
        super.init(isClosure: false, error: nil, completed: nil, storage: storage)
    }
}

/// What a subject subscription rarely has: terminal closures, and the `RippleDebug.Scope` it
/// counts in. Kept out of the subscription so one without them is a single 64-byte block.
@usableFromInline
final class SubscriptionExtras<Value> {
    /// The error closure, until `releaseClosures`. Read and written only by the subject's turn
    /// holder, or by a `deinit` when no thread can deliver any more (as the subscription's `next`).
    @usableFromInline @exclusivity(unchecked) var error: ((any Error) -> Void)?
    /// The completion closure, until `releaseClosures` (as `error`).
    @usableFromInline @exclusivity(unchecked) var completed: (() -> Void)?
    /// The scope the subscription counts in, if any.
    @usableFromInline let debugScope: RippleDebug.Scope?

    @inlinable
    init(error: ((any Error) -> Void)?, completed: (() -> Void)?, debugScope: RippleDebug.Scope?) {
        self.error = error
        self.completed = completed
        self.debugScope = debugScope
    }

    @inlinable var holdsClosures: Bool { error != nil || completed != nil }

    @inlinable
    func releaseClosures() {
        error = nil
        completed = nil
    }
}
