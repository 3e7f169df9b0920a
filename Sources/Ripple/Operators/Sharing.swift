/// A cold signal wired to a subject, subscribed on `connect()` (RAC's `RACMulticastConnection`).
///
/// Subscribers of `signal` subscribe to the subject; `connect()` subscribes the subject to
/// the source. `connect()` is idempotent: while connected it returns the same disposable;
/// disposing that disposable disconnects, and a later `connect()` connects again (to the
/// same subject, which keeps whatever state it has, e.g. its terminal event).
///
///     let connection = expensive.multicast(Subject())
///     connection.signal.subscribeNext { print("a \($0)") }
///     connection.signal.subscribeNext { print("b \($0)") }
///     connection.connect()   // one subscription to `expensive`, seen by both
public final class MulticastConnection<Value>: SignalProtocol {
    /// Guarded by `state`.
    private struct State {
        var connection: SerialDisposable?
        /// The subscriber count of every `autoconnect()` signal of this connection (one count
        /// per connection, as RAC's), made by the first `autoconnect()` call.
        var autoconnection: SharedConnection<MulticastConnection<Value>>?
    }

    private let source: any SignalProtocol<Value>
    let subject: any SignalProtocol<Value> & SubscriberProtocol<Value>
    private let state = Lock(State())

    init(source: any SignalProtocol<Value>, subject: any SignalProtocol<Value> & SubscriberProtocol<Value>) {
        self.source = source
        self.subject = subject
    }

    /// The multicast signal: subscribing subscribes to the subject.
    public var signal: Signal<Value> { subject.asSignal() }

    /// Subscribes to the subject (not to the source); see `connect()`.
    @discardableResult
    public func subscribe(_ subscriber: any SubscriberProtocol<Value>) -> any Disposable {
        subject.subscribe(subscriber)
    }

    /// Subscribes the subject to the source, once; returns the connection's disposable.
    ///
    /// When the subject has already ended (a finished source, say), there is nothing to
    /// connect: the source is not run again and a disposed disposable is returned.
    @discardableResult
    public func connect() -> any Disposable {
        if subject.isDisposed { return DisposedDisposable.shared }
        let (connection, isNew) = state.withLock { state -> (SerialDisposable, Bool) in
            if let existing = state.connection, !existing.isDisposed { return (existing, false) }
            let connection = SerialDisposable()
            state.connection = connection
            return (connection, true)
        }
        // The source's subscription takes the connection's slot before its producer runs
        // (`subscribe(_:linking:)`): disposing the connection from a callback (or another thread)
        // while a synchronous source sends stops it at once.
        if isNew { source.subscribe(subject, linking: { connection.disposable = $0 }) }
        return connection
    }

    /// A signal that connects when its first subscriber arrives and disconnects when the
    /// last one leaves (RAC's `autoconnect`, RxSwift's `refCount`).
    ///
    /// The subject is kept: a subscriber arriving after the count dropped to zero connects
    /// again, into the same subject, and first sees what that subject replays. If the
    /// subject has ended (a finite source finished), the source is not run again: the late
    /// subscriber gets the subject's terminal event (after its replay, for a `ReplaySubject`).
    ///
    /// Every `autoconnect()` signal of one connection shares one count: the last subscriber
    /// of any of them disconnects. When `subscribe` returns, the source is connected, even if
    /// another thread is still connecting it (the call waits for that thread); a reconnection
    /// waits until the previous upstream subscription is disposed, so two never feed the
    /// subject at once — except where waiting would deadlock (a cycle in the wait-for graph,
    /// see <doc:DeliveryTurn>), or for a subscriber arriving from the upstream's own
    /// dispose.
    public func autoconnect() -> Signal<Value> {
        let count = state.withLock { state in  // builds objects only: no user code
            if let existing = state.autoconnection { return existing }
            // Only this connection's signals reach `self`, and they cross threads only when
            // `Value` is `Sendable` (then so is `self`): the box adds no sharing of its own.
            let me = UnownedConnection(value: self)
            let made = SharedConnection<MulticastConnection<Value>>(make: { me.value }, connect: { $0.connect() })
            state.autoconnection = made
            return made
        }
        return Signal { subscriber in
            // The signal holds this connection (`count` names it unowned, to avoid a cycle).
            let (connection, join) = withExtendedLifetime(self) { count.join() }
            let subscription = connection.subject.subscribe(subscriber)
            count.finishJoin(connection, join)
            return CompoundDisposable([subscription, ActionDisposable { count.leave() }])
        }
    }
}

extension SignalProtocol {
    /// Wires `self` to `subject` in a `MulticastConnection` (RAC's `multicast:`).
    ///
    ///     let connection = s.multicast(ReplaySubject(capacity: 1))
    ///     connection.connect()
    public func multicast<S: SignalProtocol & SubscriberProtocol>(_ subject: S) -> MulticastConnection<Value>
    where S.Value == Value {
        MulticastConnection(source: self, subject: subject)
    }

    /// `multicast(Subject())` (RAC's `publish`): subscribers see only what is sent after
    /// they subscribed, once connected.
    ///
    ///     let shared = s.publish().autoconnect()
    public func publish() -> MulticastConnection<Value> {
        multicast(Subject<Value>())
    }

    /// Subscribes to `self` at once and replays every value to each subscriber (RAC's `replay`).
    ///
    /// The source runs once, now; its subscription is never disposed by subscribers leaving.
    public func replay() -> Signal<Value> {
        let connection = multicast(ReplaySubject<Value>())
        connection.connect()
        return connection.signal
    }

    /// Subscribes to `self` at once and replays the latest value to each subscriber (RAC's `replayLast`).
    public func replayLast() -> Signal<Value> {
        let connection = multicast(ReplaySubject<Value>(capacity: 1))
        connection.connect()
        return connection.signal
    }

    /// Subscribes to `self` when the first subscriber arrives, then replays up to
    /// `capacity` values to every subscriber (RAC's `replayLazily`).
    ///
    /// The connection is kept when subscribers leave: a late subscriber gets the replay
    /// (and the terminal event of a finished source), not a new run of the source.
    public func replayLazily(capacity: Int = .max) -> Signal<Value> {
        let connection = multicast(ReplaySubject<Value>(capacity: capacity))
        return Signal { subscriber in
            let subscription = connection.subscribe(subscriber)
            connection.connect()
            return subscription
        }
    }

    /// Shares one subscription to `self` among all current subscribers (RxSwift's `share()`).
    ///
    /// The first subscriber connects; when the last one leaves the connection is disposed
    /// and reset: the next subscriber starts a fresh run of the source with a fresh subject,
    /// so a late subscriber to a finished cold source sees it run again. When `subscribe`
    /// returns, the source is connected (a subscriber arriving while another thread connects
    /// waits for it), and a fresh run starts only after the previous one is disposed.
    public func share() -> Signal<Value> {
        let shared = ShareState<Value>(source: self)
        return Signal { subscriber in shared.subscribe(subscriber) }
    }
}

/// An unowned reference to a connection, for its own autoconnect count (the signal holds the
/// connection; the count must not, or they would form a cycle).
private struct UnownedConnection<Value>: @unchecked Sendable {  // see `autoconnect()`: only its signals reach it
    unowned let value: MulticastConnection<Value>
}

/// The connection behind `share()`: a fresh `Subject` per connection, counted subscribers.
final class ShareState<Value>: Sendable {
    private let count: SharedConnection<MulticastConnection<Value>>

    init(source: any SignalProtocol<Value>) {
        // Reached only through the `share()` signal, which crosses threads only when `Value`
        // is `Sendable` (and then so is `source`, being a signal of it).
        let source = UncheckedSendable(source)
        count = SharedConnection(make: { source.value.multicast(Subject<Value>()) }, connect: { $0.connect() })
    }

    func subscribe(_ subscriber: any SubscriberProtocol<Value>) -> any Disposable {
        let (connection, join) = count.join()
        let subscription = connection.subscribe(subscriber)
        count.finishJoin(connection, join)
        return CompoundDisposable([subscription, ActionDisposable { [count] in count.leave() }])
    }
}

/// Sendable only when its values are: a MulticastConnection of non-`Sendable` values stays in one isolation domain.
extension MulticastConnection: @unchecked Sendable where Value: Sendable {}  // its state is behind `state`'s lock; the subject it feeds is Sendable too
