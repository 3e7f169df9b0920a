/// A cold signal: runs its subscribe closure once for each subscription (RAC's dynamic signal).
///
/// Subscribing creates a compound disposable and a passthrough subscriber, runs the
/// closure with the passthrough, and adds the disposable the closure returns to the
/// compound. The passthrough forwards only while the compound is not disposed; a
/// terminal event disposes it, so the closure's cleanup runs exactly once however the
/// subscription ends. When the closure's subscriber is released without a terminal event
/// (the closure kept no reference to it, so nothing can send any more), the subscription
/// is disposed, as ReactiveSwift interrupts a signal whose input observer goes away.
///
///     let s = Signal<Int> { subscriber in
///         subscriber.sendNext(1)
///         subscriber.sendCompleted()
///         return ActionDisposable { print("cleaned up") }
///     }
///     s.subscribeNext { print($0) }   // prints 1, then "cleaned up"
///
/// The closure need not be `@Sendable`: Ripple serializes what it delivers, and the
/// closure runs on the thread that subscribes unless `subscribe(on:)` says otherwise.
public final class Signal<Value>: SignalProtocol {
    /// The closure run for every subscription.
    public typealias Producer = (PassthroughSubscriber<Value>) -> (any Disposable)?

    /// Set once; cleared only by `deinit` (see there). Read concurrently by subscribers.
    @usableFromInline @exclusivity(unchecked) var producer: Producer?

    /// Whether the producer sends to its passthrough one event at a time and never from inside
    /// a callback it calls: true for the signals of synchronous operators (`lift` and stage runs,
    /// `Signal(stageRun:)`, whose producers send only from the upstream relay's callbacks) and of `from`, `just`,
    /// `empty` and `error` (one loop on the subscribing thread). A subscriber that library
    /// code hands to such a signal alone needs no delivery turn of its own (cold-path fusion:
    /// `subscribe(exclusively:)`, `Subscriber.upstreamSerializes`, <doc:DeliveryTurn>).
    @usableFromInline let sendsSerially: Bool

    /// The run of fused one-to-one operators this signal ends with (`StageRun`), which the next
    /// such operator extends; nil for any other signal. Set once; cleared only by `deinit`.
    @usableFromInline @exclusivity(unchecked) var stageRun: StageRun<Value>?

    /// Creates a cold signal from a subscribe closure (RAC's `createSignal:`).
    ///
    /// - Parameter producer: Runs once per subscription with a subscriber to send to;
    ///   returns what to dispose when the subscription ends, or nil.
    @inlinable
    public init(_ producer: @escaping Producer) {
        self.producer = producer
        sendsSerially = false
    }

    /// A signal whose producer sends one event at a time and never re-entrantly (see
    /// `sendsSerially`): only for producers of this library that guarantee it.
    @inlinable
    init(sendsSerially: Bool, stageRun: StageRun<Value>? = nil, _ producer: @escaping Producer) {
        self.producer = producer
        self.sendsSerially = sendsSerially
        self.stageRun = stageRun
    }

    deinit {
        // Releasing the producer (and the stage run) releases what it captured, often the upstream
        // signal: a chain built by a loop releases recursively, so deep in it, continue on a fresh stack.
        if !StackGuard.hasRoom() {
            StackGuard.onFreshStack {
                producer = nil
                stageRun = nil
            }
        }
    }

    /// Runs the subscribe closure for `subscriber` and returns the subscription's
    /// compound disposable.
    @inlinable @discardableResult
    public func subscribe(_ subscriber: any SubscriberProtocol<Value>) -> any Disposable {
        let compound = CompoundDisposable()
        subscribe(subscriber, into: compound)
        return compound
    }

    /// `subscribe(_:)` with the subscription's compound made by the caller, which may link it
    /// into its own before the producer runs (see `lift`).
    @inlinable
    func subscribe(_ subscriber: any SubscriberProtocol<Value>, into compound: CompoundDisposable) {
        guard StackGuard.hasRoom() else { return StackGuard.onFreshStack { subscribe(subscriber, into: compound) } }
        // Cast once: the compound and the passthrough share it. A conformer that does not
        // serialize by itself gets a `Subscriber` in front, so its callbacks never overlap.
        let direct = subscriber as? Subscriber<Value>
            ?? (subscriber is SerializingReceiver ? nil : Subscriber(serializing: subscriber))
        if let direct { compound.add(direct) }
        let passthrough = PassthroughSubscriber(forwardingTo: subscriber, direct: direct, disposable: compound)
        RippleDebug.checkNoLockHeld("a signal's subscribe closure")
        compound.add(producer.unsafelyUnwrapped(passthrough))
    }

    /// Subscribes `subscriber`, which the caller made and hands to this signal alone: when this
    /// signal sends serially, the subscriber delivers without a turn of its own (cold-path
    /// fusion, `Subscriber.upstreamSerializes`). Set before subscribing, so before any event.
    @inlinable @discardableResult
    func subscribe(exclusively subscriber: Subscriber<Value>) -> any Disposable {
        if sendsSerially { subscriber.upstreamSerializes = true }
        return subscribe(subscriber)
    }

    /// `subscribe(exclusively:)` into a compound the caller made (see `lift`).
    @inlinable
    func subscribe(exclusively subscriber: Subscriber<Value>, into compound: CompoundDisposable) {
        if sendsSerially { subscriber.upstreamSerializes = true }
        subscribe(subscriber, into: compound)
    }

    /// Subscribes the closures through a `Subscriber` only this subscription can reach; on a
    /// signal of synchronous operators (or `from`) it is fused behind the stage before it and
    /// takes no delivery turn of its own (see <doc:DeliveryTurn>).
    @inlinable
    public func makeSubscription(
        next: ((Value) -> Void)?,
        error: ((any Error) -> Void)?,
        completed: (() -> Void)?
    ) -> any Disposable {
        subscribe(exclusively: Subscriber(next: next, error: error, completed: completed))
    }
}

extension Signal {
    /// A signal that sends `value`, then completes (RAC's `return:`).
    ///
    ///     Signal.just(1)   // -1|
    public static func just(_ value: Value) -> Signal<Value> {
        Signal(sendsSerially: true) { subscriber in
            subscriber.sendNext(value)
            subscriber.sendCompleted()
            return nil
        }
    }

    /// A signal that completes at once, sending nothing.
    public static var empty: Signal<Value> {
        Signal(sendsSerially: true) { subscriber in
            subscriber.sendCompleted()
            return nil
        }
    }

    /// A signal that never sends anything, not even a terminal event.
    ///
    /// Its subscriptions stay alive until disposed (they hold their subscriber, as a
    /// source that might still send would).
    public static var never: Signal<Value> {
        Signal { subscriber in ActionDisposable { withExtendedLifetime(subscriber) {} } }
    }

    /// A signal that fails at once with `error`.
    ///
    ///     Signal<Int>.error(MyError.boom)   // #
    public static func error(_ error: any Error) -> Signal<Value> {
        Signal(sendsSerially: true) { subscriber in
            subscriber.sendError(error)
            return nil
        }
    }

    /// A signal that sends each element of `sequence` in order, then completes.
    ///
    /// It stops early, without completing, when the subscription is disposed during
    /// the loop.
    ///
    ///     Signal.from([1, 2, 3])   // (123|)
    @inlinable
    public static func from<S: Sequence>(_ sequence: S) -> Signal<Value> where S.Element == Value {
        Signal(sendsSerially: true) { subscriber in
            if subscriber.sendEach(sequence) { subscriber.sendCompleted() }
            return nil
        }
    }
}

/// Sendable only when its values are: a Signal of non-`Sendable` values stays in one isolation domain.
extension Signal: @unchecked Sendable where Value: Sendable {}  // `producer` is set once in `init`; each subscription runs it on the subscribing thread
