import Synchronization

/// The subscriber a cold signal's subscribe closure receives (RAC's passthrough subscriber).
///
/// It forwards to the real subscriber only while the subscription's compound disposable is
/// not disposed, and a terminal event disposes that compound, which runs the closure's
/// cleanup and stops anything still sending. `isDisposed` lets a long-running producer stop
/// early. When the producer lets go of it without a terminal event (nothing can send to the
/// subscription any more), the subscription is disposed. It is a concrete final class (not an existential) so a producer's sends compile
/// to direct calls.
///
///     Signal<Int> { subscriber in      // subscriber: PassthroughSubscriber<Int>
///         subscriber.sendNext(1)
///         subscriber.sendCompleted()
///         return nil
///     }
public final class PassthroughSubscriber<Value>: SubscriberProtocol, SerializingReceiver {
    // @unchecked: every stored property is immutable or atomic.
    @usableFromInline let inner: any SubscriberProtocol<Value>
    /// `inner` when it is a `Subscriber`, or the `Subscriber` that serializes what reaches
    /// `inner` when `inner` does not serialize by itself: called directly, not through the existential.
    @usableFromInline let direct: Subscriber<Value>?
    /// `direct`, unretained (`direct` owns it): the send path calls it without a retain and
    /// release per event (an `if let` of the optional `let` copied the reference, two atomic
    /// operations per stage of a pipeline).
    @usableFromInline let directRef: Unmanaged<Subscriber<Value>>?
    @usableFromInline let disposable: CompoundDisposable
    /// Whether `direct` is a `Subscriber` wrapped around `inner` (rather than `inner` itself).
    @usableFromInline let wrapsInner: Bool
    /// Set by the first terminal event, so exactly one is forwarded.
    @usableFromInline let terminated = Atomic<Bool>(false)

    /// - Parameter direct: `inner` when it is a `Subscriber` (the caller has already cast it),
    ///   or a `Subscriber` wrapping `inner`.
    @inlinable
    init(forwardingTo inner: any SubscriberProtocol<Value>, direct: Subscriber<Value>?, disposable: CompoundDisposable) {
        self.inner = inner
        self.direct = direct
        directRef = direct.map { Unmanaged.passUnretained($0) }
        self.disposable = disposable
        wrapsInner = direct.map { $0 !== inner } ?? false
    }

    deinit {
        // The producer let go of this subscriber, so nothing can send to the subscription any
        // more: end it (its cleanup runs), as ReactiveSwift interrupts a signal whose input
        // observer goes away. Otherwise a subscription whose source vanished without ending —
        // a released subject under a chain of operators — would keep itself alive forever.
        if !terminated.load(ordering: .acquiring), !disposable.isDisposed { disposable.dispose() }
    }

    /// True once the subscription is disposed, a terminal event was sent, or the real
    /// subscriber stopped taking events.
    @inlinable
    public var isDisposed: Bool {
        if disposable.isDisposed || terminated.load(ordering: .acquiring) { return true }
        if let directRef {
            if directRef._withUnsafeGuaranteedRef({ $0.isDisposed }) { return true }
            if !wrapsInner { return false }
        }
        return inner.isDisposed
    }

    /// The relay depth of the subscriber this forwards to (0 unless it is a relay `Subscriber`).
    @inlinable
    var relayDepth: UInt32 { direct?.relayDepth ?? 0 }

    /// Forwards a value unless the subscription has ended.
    ///
    /// A `direct` subscriber checks that itself: it is in the compound, which disposes it
    /// before `dispose()` returns, and it has accepted the terminal event before this
    /// passthrough's `sendError`/`sendCompleted` return — so its own status check (which it
    /// makes anyway) stops the same values, and a stage costs one check, not three.
    @inlinable @inline(__always)
    public func sendNext(_ value: Value) {
        if let directRef { return directRef._withUnsafeGuaranteedRef { $0.forwardNext(value) } }
        if disposable.isDisposed || terminated.load(ordering: .acquiring) { return }
        inner.sendNext(value)
    }

    /// Sends each element of `sequence` in order while the subscription lasts (checking before
    /// each, as a producer's `isDisposed` loop does); returns false when it ended first.
    ///
    /// For a fused `direct` subscriber (`Subscriber.upstreamSerializes`) the whole loop runs in
    /// it (`Subscriber.receiveEach`): one status check and one closure call per element.
    @inlinable
    func sendEach<S: Sequence>(_ sequence: S) -> Bool where S.Element == Value {
        if let directRef, !wrapsInner, directRef._withUnsafeGuaranteedRef({ $0.upstreamSerializes }) {
            if disposable.isDisposed || terminated.load(ordering: .acquiring) { return false }
            return directRef._withUnsafeGuaranteedRef { $0.receiveEach(sequence) }
        }
        for element in sequence {
            if isDisposed { return false }
            sendNext(element)
        }
        return true
    }

    /// Forwards the error, then disposes the subscription.
    @inlinable
    public func sendError(_ error: any Error) {
        guard beginTermination() else { return }
        if let direct { direct.sendError(error) } else { inner.sendError(error) }
        disposable.dispose()
    }

    /// Forwards completion, then disposes the subscription.
    @inlinable
    public func sendCompleted() {
        guard beginTermination() else { return }
        if let direct { direct.sendCompleted() } else { inner.sendCompleted() }
        disposable.dispose()
    }

    /// Disposes the subscription this passthrough feeds, without a terminal event (used
    /// when its source can never send again).
    func disposeSubscription() {
        disposable.dispose()
    }

    @inlinable
    func beginTermination() -> Bool {
        if disposable.isDisposed { return false }
        return !terminated.exchange(true, ordering: .acquiringAndReleasing)
    }
}

/// Sendable only when its values are: a PassthroughSubscriber of non-`Sendable` values stays in one isolation domain.
extension PassthroughSubscriber: @unchecked Sendable where Value: Sendable {}  // its state is atomics and `let`s; delivery goes through the serializing `Subscriber` turn
