/// A cold signal wired to a subject, subscribed on `connect()` (RAC's `RACMulticastConnection`).
///
/// Subscribers of `signal` subscribe to the subject; `connect()` subscribes the subject to
/// the source. `connect()` is idempotent: while connected it returns the same disposable;
/// disposing that disposable disconnects, and a later `connect()` connects again.
///
/// What a run's end leaves depends on how the connection was made. `multicast(_:)` keeps the
/// subject it was given, with its state: once it has ended, its terminal event is all a later
/// subscriber gets, and the source is not run again. `publish()` and `multicast(makeSubject:)`
/// reset instead (RxSwift's `publish()` and `multicast(makeSubject:)`): when the source ends,
/// the connection lets go of its subject before the terminal event is forwarded, and the next
/// subscriber or `connect()` gets a fresh one (a `Subject`, or the factory's), so a later
/// subscriber waits for the next `connect()`, which runs the source again.
///
///     let connection = expensive.multicast(Subject())
///     connection.signal.subscribeNext { print("a \($0)") }
///     connection.signal.subscribeNext { print("b \($0)") }
///     connection.connect()   // one subscription to `expensive`, seen by both
public final class MulticastConnection<Value>: SignalProtocol {
    /// Guarded by `state`.
    private struct State: @unchecked Sendable {  // the subject box leaves the lock only for threads subscribing to or connecting this connection, which reach it through signals that are Sendable when `Value` is
        /// The subject subscribers subscribe to now: the given one for good, or the current one
        /// of `publish()` or `multicast(makeSubject:)`, replaced by a fresh box (its subject made
        /// when first needed) when the run feeding it ends.
        var subject: SubjectBox<Value>
        /// The run `connect()` started, until it is disposed or (with fresh subjects) its source ends.
        var connection: SerialDisposable?
        /// The subscriber count of every `autoconnect()` signal of this connection (one count
        /// per connection, as RAC's), made by the first `autoconnect()` call.
        var autoconnection: SharedConnection<SubjectBox<Value>>?
    }

    private let source: any SignalProtocol<Value>
    /// The subject `multicast(_:)` was given, kept with its state; nil for fresh subjects.
    private let givenSubject: (any SignalProtocol<Value> & SubscriberProtocol<Value>)?
    /// Makes the fresh subject of each run (`publish()`, `multicast(makeSubject:)`); nil for a
    /// given subject. User code: called only by a `SubjectBox`, when a subscriber or `connect()`
    /// first needs the box's subject, outside any lock.
    private let makeSubject: (() -> any SignalProtocol<Value> & SubscriberProtocol<Value>)?
    private let state: Lock<State>

    init(source: any SignalProtocol<Value>, subject: any SignalProtocol<Value> & SubscriberProtocol<Value>) {
        self.source = source
        givenSubject = subject
        makeSubject = nil
        state = Lock(State(subject: SubjectBox(subject)))
    }

    /// The connection of `publish()` and `multicast(makeSubject:)`: a subject from `makeSubject`
    /// when the first subscriber or `connect()` needs it, and a fresh one after each run's end,
    /// made the same way.
    init(source: any SignalProtocol<Value>, makeSubject: @escaping () -> any SignalProtocol<Value> & SubscriberProtocol<Value>) {
        self.source = source
        givenSubject = nil
        self.makeSubject = makeSubject
        state = Lock(State(subject: SubjectBox(making: makeSubject)))
    }

    /// The multicast signal: subscribing subscribes to the subject (for `publish()`, the
    /// current one).
    public var signal: Signal<Value> {
        if let givenSubject { return givenSubject.asSignal() }
        return Signal { subscriber in self.subscribe(subscriber) }
    }

    /// Subscribes to the subject (not to the source); see `connect()`.
    @discardableResult
    public func subscribe(_ subscriber: any SubscriberProtocol<Value>) -> any Disposable {
        if let givenSubject { return givenSubject.subscribe(subscriber) }
        // The box (a class reference) leaves the lock, not the existential subject inside it;
        // its subject is made here, outside the lock, if this is the first to need it.
        let box = state.withLock { state in state.subject }
        return box.subject.subscribe(subscriber)
    }

    /// Subscribes the subject to the source, once; returns the connection's disposable.
    ///
    /// When a given subject has already ended (`multicast(_:)` of a finished source, say),
    /// there is nothing to connect: the source is not run again and a disposed disposable is
    /// returned. `publish()`'s connection has a fresh subject by then, and connecting runs the
    /// source again.
    ///
    /// Disposing the returned disposable stops the run and leaves the subscribers attached and
    /// unended, waiting for the next `connect()`; an end the source sends after that disposal
    /// reaches none of them.
    @discardableResult
    public func connect() -> any Disposable {
        connect(feeding: nil)
    }

    /// `connect()`, for an `autoconnect()` connection whose subscribers subscribed to
    /// `expected`: when that is no longer the current subject (its run ended, and `publish()`
    /// took a fresh one), there is nothing to connect and a disposed disposable is returned.
    private func connect(feeding expected: SubjectBox<Value>?) -> any Disposable {
        // Asked outside the lock: a given subject may be a type of the user's.
        if let givenSubject, givenSubject.isDisposed { return DisposedDisposable.shared }
        let started: (connection: SerialDisposable, subject: SubjectBox<Value>, isNew: Bool)? = state.withLock { state in
            if let expected, expected !== state.subject { return nil }
            if let existing = state.connection, !existing.isDisposed { return (existing, state.subject, false) }
            let connection = SerialDisposable()
            state.connection = connection
            return (connection, state.subject, true)
        }
        guard let started else { return DisposedDisposable.shared }
        let connection = started.connection
        guard started.isNew else { return connection }
        // The source's subscription takes the connection's slot before its producer runs
        // (`subscribe(_:linking:)`): disposing the connection from a callback (or another thread)
        // while a synchronous source sends stops it at once.
        if givenSubject != nil {
            source.subscribe(started.subject.subject, linking: { connection.disposable = $0 })
        } else {
            let subject = started.subject
            let target = subject.subject  // made here, outside the lock, if this is the first to need it
            let feeder = SourceFeeder(target, ended: { [weak self] in self?.runEnded(connection, feeding: subject) ?? true })
            // The feeder forwards each event at once: a subject of Ripple's serializes delivery
            // itself, any other (the factory's type) gets a `Subscriber` in front, as a given
            // subject does from `subscribe`, so its methods never overlap.
            let receiver: any SubscriberProtocol<Value> = target is SerializingReceiver ? feeder : Subscriber(serializing: feeder)
            source.subscribe(receiver, linking: { connection.disposable = $0 })
        }
        return connection
    }

    /// The source of `publish()`'s run `connection` ended; its terminal event has not reached
    /// `subject` yet. Resets everything first, so a subscriber arriving from a terminal callback
    /// (a `retry`) or later starts a fresh run: forgets the run, lets go of the subject (a fresh
    /// box takes its place, whose subject the next subscriber or `connect()` makes), resets the
    /// `autoconnect()` count of the subscribers of `subject`, and disposes the run.
    ///
    /// Returns whether the terminal event is to be forwarded: not when the run was disposed
    /// (or replaced) before its end got here. The subject is kept across a disposal, so a newer
    /// run may feed it now, and a stale end must not end that run's subscribers or reset its
    /// count. Decided under the lock, against `connect()`'s own check, so either the end wins
    /// (the subject is replaced before any newer run can take it) or the disposal does.
    ///
    /// Runs no user code under the lock, and calls no factory at all: the terminal path only
    /// makes the empty box.
    private func runEnded(_ connection: SerialDisposable, feeding subject: SubjectBox<Value>) -> Bool {
        guard let makeSubject else { return false }
        let (isCurrent, count) = state.withLock { state -> (Bool, SharedConnection<SubjectBox<Value>>?) in
            guard state.connection === connection, !connection.isDisposed else { return (false, nil) }
            state.connection = nil
            // Not released here: the run's feeder holds `subject` until it has forwarded.
            if state.subject === subject { state.subject = SubjectBox(making: makeSubject) }
            return (true, state.autoconnection)
        }
        guard isCurrent else { return false }
        count?.sourceEnded(subject)
        connection.dispose()  // user code (the source's dispose): after unlocking
        return true
    }

    /// The subject an `autoconnect()` connection starting now subscribes its subscribers to
    /// (under the count's lock: takes this connection's, objects only; this connection never
    /// calls its count while holding its own lock).
    private func currentSubject() -> SubjectBox<Value> {
        state.withLock { state in state.subject }
    }

    /// A signal that connects when its first subscriber arrives and disconnects when the
    /// last one leaves (RAC's `autoconnect`, RxSwift's `refCount`).
    ///
    /// For `publish()`, the end of the source resets the count before the terminal event is
    /// forwarded: a subscriber arriving from a terminal callback (`retry`, say) or later starts
    /// a fresh run of the source, into the connection's fresh subject, while the subscribers of
    /// the ended run get its terminal event once, and their leaving does not disconnect the
    /// fresh run.
    ///
    /// For `multicast(_:)`, the given subject is kept: a subscriber arriving after the count
    /// dropped to zero connects again, into the same subject, and first sees what that subject
    /// replays. If the subject has ended (a finite source finished), the source is not run
    /// again: the late subscriber gets the subject's terminal event (after its replay, for a
    /// `ReplaySubject`).
    ///
    /// Every `autoconnect()` signal of one connection shares one count: the last subscriber
    /// of any of them disconnects. When `subscribe` returns, the source is connected, even if
    /// another thread is still connecting it (the call waits for that thread); a reconnection
    /// after the last subscriber left waits until the previous upstream subscription is
    /// disposed, so two never feed the subject at once (a run whose source ended feeds nothing
    /// more, but its disposal may still run when the next starts) — except where waiting would deadlock (a cycle in the wait-for graph,
    /// see <doc:DeliveryTurn>), or for a subscriber arriving from the upstream's own
    /// dispose.
    ///
    ///     let shared = request.publish().autoconnect().retry(3)   // each retry runs `request` again
    public func autoconnect() -> Signal<Value> {
        let count = state.withLock { state in  // builds objects only: no user code
            if let existing = state.autoconnection { return existing }
            // Only this connection's signals reach `self`, and they cross threads only when
            // `Value` is `Sendable` (then so is `self`): the box adds no sharing of its own.
            let me = UnownedConnection(value: self)
            // A run of `publish()` resets the count itself when its source ends (`runEnded`),
            // also a run that `connect()` started: `connect`'s `ended` is not needed.
            let made = SharedConnection<SubjectBox<Value>>(
                make: { me.value.currentSubject() },
                connect: { subject, _ in me.value.connect(feeding: subject) })
            state.autoconnection = made
            return made
        }
        return Signal { subscriber in
            // The signal holds this connection (`count` names it unowned, to avoid a cycle).
            let (subject, ticket) = withExtendedLifetime(self) { count.join() }
            let subscription = subject.subject.subscribe(subscriber)
            count.finishJoin(subject, ticket)
            return CompoundDisposable([subscription, ActionDisposable { count.leave(ticket) }])
        }
    }
}

/// A `MulticastConnection`'s subject, boxed: its identity names the subject an `autoconnect()`
/// connection subscribed its subscribers to, which a run's end and `connect(feeding:)` compare.
///
/// A box of `publish()` or `multicast(makeSubject:)` is made empty, with no user code (under
/// locks, on a run's terminal path); its subject is made by the first thread that asks for it
/// (a subscriber, or `connect()`), outside every lock. Two threads asking at once may each call
/// the factory: the first to finish is kept, and the other subject is dropped unused.
final class SubjectBox<Value> {
    /// The subject, once made, in a class of its own: the existential is kept in a stored
    /// property. Kept as a generic argument instead (`UncheckedSendable<(any …)?>`), it was
    /// miscompiled by Swift 6.3.1: calls through it used a wrong witness table and crashed.
    private final class Made {
        let subject: any SignalProtocol<Value> & SubscriberProtocol<Value>
        init(_ subject: any SignalProtocol<Value> & SubscriberProtocol<Value>) { self.subject = subject }
    }

    private let made: Lock<UncheckedSendable<Made?>>  // the subject leaves the lock only to the threads of this box's connection, which reach it through signals that are Sendable when `Value` is
    /// Makes the subject; nil for a box made with its subject.
    private let make: (() -> any SignalProtocol<Value> & SubscriberProtocol<Value>)?

    init(_ subject: any SignalProtocol<Value> & SubscriberProtocol<Value>) {
        made = Lock(UncheckedSendable(Made(subject)))
        make = nil
    }

    /// An empty box: `make` runs when its subject is first asked for.
    init(making make: @escaping () -> any SignalProtocol<Value> & SubscriberProtocol<Value>) {
        made = Lock(UncheckedSendable(nil))
        self.make = make
    }

    /// The subject, made now (outside the lock) if no one asked before. Call it outside locks:
    /// it may run the factory.
    var subject: any SignalProtocol<Value> & SubscriberProtocol<Value> {
        if let existing = made.withLock({ $0.value }) { return existing.subject }
        RippleDebug.checkNoLockHeld("multicast(makeSubject:)'s factory")
        let fresh = Made(make!())  // user code; a box made empty has `make`
        let (kept, unused): (Made, Made?) = made.withLock { slot in
            if let existing = slot.value { return (existing, fresh) }
            slot.value = fresh
            return (fresh, nil)
        }
        _ = unused  // released after unlocking: its teardown may run user code
        return kept.subject
    }
}

/// Feeds one run of a shared source into a subject: on a terminal event it first calls
/// `ended`, which resets the sharing connection, then forwards the event if `ended` says the
/// run was still current.
///
/// A serializing receiver: it forwards each event at once, and `ended` is safe from any
/// thread. That holds for a subject of Ripple's, which serializes delivery itself; a subject of
/// another type (`multicast(makeSubject:)`'s factory may make one) gets the feeder behind a
/// `Subscriber` (see `connect(feeding:)`).
final class SourceFeeder<Value>: SubscriberProtocol, SerializingReceiver {
    private let subject: any SubscriberProtocol<Value>
    private let ended: () -> Bool

    init(_ subject: any SubscriberProtocol<Value>, ended: @escaping () -> Bool) {
        self.subject = subject
        self.ended = ended
    }

    func sendNext(_ value: Value) { subject.sendNext(value) }

    func sendError(_ error: any Error) {
        if ended() { subject.sendError(error) }
    }

    func sendCompleted() {
        if ended() { subject.sendCompleted() }
    }

    var isDisposed: Bool { subject.isDisposed }
}

extension SignalProtocol {
    /// Wires `self` to `subject` in a `MulticastConnection` (RAC's `multicast:`).
    ///
    /// The connection keeps `subject`, with its state: after the source ends, a later
    /// subscriber gets the subject's terminal event (after its replay) and `connect()` does
    /// not run the source again. For a connection that starts afresh, use `publish()`.
    ///
    ///     let connection = s.multicast(ReplaySubject(capacity: 1))
    ///     connection.connect()
    public func multicast<S: SignalProtocol & SubscriberProtocol>(_ subject: S) -> MulticastConnection<Value>
    where S.Value == Value {
        MulticastConnection(source: self, subject: subject)
    }

    /// A connection through a `Subject` (RAC's `publish`): subscribers see only what is sent
    /// after they subscribed, once connected.
    ///
    /// Unlike `multicast(Subject())`, the connection starts afresh when the source ends (as
    /// RxSwift's `publish()`): before the terminal event is forwarded it lets go of its subject
    /// (the next subscriber or `connect()` gets a fresh one) and, under `autoconnect()`, resets
    /// the count, so a subscriber arriving from a terminal callback or later gets a fresh run of
    /// the source.
    ///
    ///     let shared = s.publish().autoconnect()
    public func publish() -> MulticastConnection<Value> {
        MulticastConnection(source: self, makeSubject: { Subject<Value>() })
    }

    /// Wires `self` to a fresh subject from `makeSubject` for each run, in a `MulticastConnection`
    /// (RxSwift's `multicast(makeSubject:)`).
    ///
    ///     source:  -1|        (each run)
    ///     first:   -1|        (subscribes, then connect() at 0 ms)
    ///     second:  ----1|     (subscribes, then connect() at 30 ms: a fresh run into a fresh subject)
    ///
    /// `publish()` with a subject of your choice: the first subscriber or `connect()` makes the
    /// first subject; when the source ends, the connection lets go of it before forwarding the
    /// terminal event, and the next subscriber or `connect()` makes a fresh one, so a later
    /// subscriber, and the next `connect()`, start a fresh run instead of getting the ended
    /// subject's terminal event (as `multicast(_:)` gives).
    ///
    /// `makeSubject` runs on a thread that subscribes to the connection or connects it, when the
    /// connection has no subject yet, outside any lock of Ripple's — as a signal's subscribe
    /// closure runs on the subscribing thread — and never on the path of a terminal event. Two
    /// threads subscribing at once may each call it: one subject is kept, the other dropped
    /// unused. The subject may be of any type: the connection serializes what it sends it.
    ///
    /// A run disposed before its source ended keeps its subject, and its subscribers, for the
    /// next `connect()`. RxSwift's `multicast(makeSubject:)` also lets go of the subject when
    /// `connect()`'s disposable is disposed: there, subscribers of a disposed run stay on a
    /// subject nothing feeds any more, and only later subscribers see the next `connect()`.
    ///
    ///     let latest = request.multicast(makeSubject: { ReplaySubject<Page>(capacity: 1) })
    ///     latest.signal.subscribeNext { show($0) }
    ///     latest.connect()   // after it ends, connect() again runs `request` into a fresh subject
    ///
    /// - Parameter makeSubject: Makes the subject of one run.
    /// - Returns: The connection.
    public func multicast<S: SignalProtocol & SubscriberProtocol>(makeSubject: @escaping () -> S) -> MulticastConnection<Value>
    where S.Value == Value {
        MulticastConnection(source: self, makeSubject: { makeSubject() })
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
    /// so a late subscriber to a finished cold source sees it run again. When the source ends,
    /// the connection is reset before the terminal event is forwarded: a subscriber arriving
    /// from a terminal callback starts a fresh run too, even while subscribers of the ended
    /// run are still attached — `share().retry(3)` runs the source again on each attempt —
    /// and those subscribers get the terminal event once, and leave without disconnecting the
    /// fresh run. When `subscribe` returns, the source is connected (a subscriber arriving
    /// while another thread connects waits for it). After the last subscriber left, a fresh run
    /// starts only once the previous one is disposed; after the source ended, the ended run is
    /// disposed as the connection resets, and a subscriber arriving meanwhile may start the
    /// next run while that disposal still runs.
    ///
    ///     let page = request.share().retry(3)   // subscribers share a run; each retry runs `request` again
    public func share() -> Signal<Value> {
        let shared = ShareState<Value>(source: self, make: { Subject<Value>() })
        return Signal { subscriber in shared.subscribe(subscriber) }
    }

    /// `share()` that keeps the last `count` values of the current run and replays them to each
    /// new subscriber (RxSwift's `share(replay:scope: .whileConnected)`).
    ///
    ///     source:  -1-2-3-4|
    ///     first:   -1-2-3-4|
    ///     second:  -----(23)-4|     (joins at 55 ms; replay 2: the last two values at once)
    ///
    /// As `share()`, the first subscriber connects and the last one leaving disconnects; each
    /// run feeds a fresh `ReplaySubject` of capacity `count`, so what is replayed is only what
    /// the current run sent. When the source ends, its subscribers get the terminal event and
    /// the replay is forgotten: a later subscriber starts a fresh run (RxSwift's
    /// `.whileConnected`, not `.forever`; for a replay that outlives the run, use
    /// `replayLazily(capacity:)`). `share(replay: 0)` is `share()`.
    ///
    ///     let settings = loadSettings().share(replay: 1)   // late subscribers get the latest at once
    ///
    /// - Parameter count: How many of the latest values to replay; zero or more.
    /// - Returns: A signal that shares one run of `self` among its current subscribers.
    /// - Precondition: `count` is zero or more.
    public func share(replay count: Int) -> Signal<Value> {
        precondition(count >= 0, "share(replay:) needs a count of zero or more, got \(count)")
        if count == 0 { return share() }
        let shared = ShareState<Value>(source: self, make: { ReplaySubject<Value>(capacity: count) })
        return Signal { subscriber in shared.subscribe(subscriber) }
    }
}

/// An unowned reference to a connection, for its own autoconnect count (the signal holds the
/// connection; the count must not, or they would form a cycle).
private struct UnownedConnection<Value>: @unchecked Sendable {  // see `autoconnect()`: only its signals reach it
    unowned let value: MulticastConnection<Value>
}

/// The connection behind `share()` and `share(replay:)`: a fresh subject (`make`: Ripple's
/// own `Subject` or `ReplaySubject`, made under the count's lock, no user code) per
/// connection, counted subscribers.
final class ShareState<Value>: Sendable {
    private let count: SharedConnection<SubjectBox<Value>>

    init(source: any SignalProtocol<Value>, make: @escaping @Sendable () -> any SignalProtocol<Value> & SubscriberProtocol<Value>) {
        // Reached only through the `share()` signal, which crosses threads only when `Value`
        // is `Sendable` (and then so is `source`, being a signal of it).
        let source = UncheckedSendable(source)
        count = SharedConnection(make: { SubjectBox(make()) }, connect: { box, ended in
            let subject = box.subject
            let connection = SerialDisposable()
            // When the source ends, before its terminal event reaches the subject: reset the
            // count, then dispose the ended run, so a subscriber arriving from a terminal
            // callback starts a fresh run after it.
            let feeder = SourceFeeder(subject, ended: {
                ended()
                connection.dispose()
                return true  // a fresh subject per run: nothing else can be fed into this one
            })
            // Linked before the producer runs (`subscribe(_:linking:)`): the last subscriber
            // leaving while a synchronous source sends stops it at once.
            source.value.subscribe(feeder, linking: { connection.disposable = $0 })
            return connection
        })
    }

    func subscribe(_ subscriber: any SubscriberProtocol<Value>) -> any Disposable {
        let (box, ticket) = count.join()
        let subscription = box.subject.subscribe(subscriber)
        count.finishJoin(box, ticket)
        return CompoundDisposable([subscription, ActionDisposable { [count] in count.leave(ticket) }])
    }
}

/// Sendable only when its values are: a MulticastConnection of non-`Sendable` values stays in one isolation domain.
extension MulticastConnection: @unchecked Sendable where Value: Sendable {}  // its state is behind `state`'s lock; the subject it feeds is Sendable too
