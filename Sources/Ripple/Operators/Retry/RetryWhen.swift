extension SignalProtocol {
    /// On error, lets a signal of your making decide: it gets the errors, and each value it
    /// sends subscribes again; its completion completes the result, its error fails it
    /// (RxSwift's `retry(when:)`).
    ///
    ///     source (each attempt): -1#
    ///     trigger:               ----x---(x|)    (errors.delay(20 ms).take(2))
    ///     result:                -1---1---1|
    ///
    /// `handler` runs once per subscription, with a signal of the source's errors, and its
    /// signal is subscribed before the first attempt. As in RxSwift, the trigger answers errors:
    /// a value resubscribes the source only while the result waits after a failure (values sent
    /// while an attempt runs are ignored), and the trigger's completion or error ends the result
    /// when no attempt runs — at once if it waits, else at the running attempt's failure, which is
    /// then not forwarded. An attempt that completes completes the result. Retries run in a loop,
    /// not recursively, so a trigger that answers at once keeps the stack flat. A retry
    /// subscribes the source on the thread that delivers the trigger's value: with a trigger
    /// that sends on another thread (a timer's), the attempts run there, as `concatMap` runs its
    /// next inner signal on the thread that completed the previous one. Unlike
    /// `retry(upTo:backoff:on:)`, this is not checked: the source and its values need not be
    /// `Sendable`, so keep such a trigger to sources that may move.
    ///
    ///     let feed = connect(to: server).retry(when: { errors in
    ///         errors.scan(0) { count, _ in count + 1 }
    ///             .take(while: { $0 <= 3 })                       // three retries, then complete
    ///             .flatMap { _ in Signal<Int>.timer(.seconds(1), on: queue) }
    ///     })
    ///
    /// - Parameter handler: Makes the trigger from the signal of the source's errors.
    /// - Returns: A signal of every attempt's values, ending as the last attempt or the trigger says.
    public func retry<Trigger: SignalProtocol>(
        when handler: @escaping (Signal<any Error>) -> Trigger
    ) -> Signal<Value> {
        Signal { downstream in
            let errors = Subject<any Error>()
            let driver = RetryWhenDriver(source: self, errors: errors, downstream: downstream)
            downstream.disposable.add(driver)
            // The trigger's subscription, then each attempt's slot, join this subscription before
            // their producers run (`subscribe(linking:)`): ending it while either sends
            // synchronously stops it at once.
            handler(errors.asSignal()).subscribe(
                linkingInto: downstream.disposable,
                next: { _ in driver.triggerSent() },
                error: { driver.triggerEnded(.error($0)) },
                completed: { driver.triggerEnded(.completed) })
            driver.start()
            return nil
        }
    }
}

/// What one `retry(when:)` subscription decides under its lock, as a pure state machine.
///
///     running ──attemptFailed()──▶ waiting ──triggerSent()──▶ running
///        │                            │
///        └─ completed, trigger's end ─┴── dispose() ──▶ finished
///
/// Invariants:
/// 1. At most one attempt is live: a new one starts only from `waiting`, at a trigger value.
/// 2. The trigger's end is forwarded only when no attempt runs: at once from `waiting`, else it
///    is kept until the running attempt fails (its error is then dropped) — or completes.
/// 3. One terminal event at most: every path to `finished` decides it under the lock.
/// 4. At most one thread loops (`isLooping`); a retry requested while it loops is started by
///    that thread, so attempts never nest.
struct RetryWhenState: Sendable {
    enum Phase: Equatable, Sendable {
        /// An attempt is live (or about to start).
        case running
        /// The attempt failed; its error went to the trigger, whose answer is awaited.
        case waiting
        /// The result ended, or was disposed.
        case finished
    }

    /// How the trigger ended.
    enum End: Sendable {
        case completed
        case error(any Error)
    }

    private(set) var phase = Phase.running
    /// The trigger's end, kept while an attempt runs (invariant 2).
    private(set) var triggerEnd: End?
    private(set) var isLooping = false
    private var mustAttempt = false

    /// What to do with an attempt's error.
    enum Failure: Sendable {
        /// The result has ended: drop it.
        case ignore
        /// Hand it to the trigger, through the errors signal.
        case publish
        /// The trigger has ended: forward its end instead.
        case end(End)
    }

    mutating func attemptFailed() -> Failure {
        guard phase == .running else { return .ignore }
        if let triggerEnd {
            phase = .finished
            return .end(triggerEnd)
        }
        phase = .waiting
        return .publish
    }

    /// An attempt completed: true if the completion is to be forwarded.
    mutating func attemptCompleted() -> Bool {
        guard phase == .running else { return false }
        phase = .finished
        return true
    }

    /// The trigger sent a value: true if a retry is due (the result waits after a failure).
    mutating func triggerSent() -> Bool {
        guard phase == .waiting else { return false }
        phase = .running
        mustAttempt = true
        return true
    }

    /// The trigger ended: the end to forward now, or nil (kept until the running attempt
    /// fails, or dropped because the result has ended).
    mutating func triggerEnded(_ end: End) -> End? {
        switch phase {
        case .waiting:
            phase = .finished
            return end
        case .running:
            if triggerEnd == nil { triggerEnd = end }
            return nil
        case .finished:
            return nil
        }
    }

    mutating func dispose() {
        phase = .finished
        mustAttempt = false
    }

    /// The first attempt is due.
    mutating func startFirst() {
        mustAttempt = true
    }

    /// True if the calling thread is to run the loop; false if the thread running it will
    /// start the attempt (invariant 4).
    mutating func startLoop() -> Bool {
        if isLooping { return false }
        isLooping = true
        return true
    }

    /// The looper's next step: true to start an attempt, false to end the loop.
    mutating func nextAttempt() -> Bool {
        if mustAttempt, phase == .running {
            mustAttempt = false
            return true
        }
        mustAttempt = false
        isLooping = false
        return false
    }
}

/// One `retry(when:)` subscription: the locked `RetryWhenState` (its invariants live there),
/// the errors subject the trigger is made from, and the live attempt's slot.
final class RetryWhenDriver<Source: SignalProtocol>: Disposable, @unchecked Sendable {  // state behind its lock; events reach downstream through its serial forwarder; one thread at a time subscribes the source (the loop), the one delivering the trigger's value: a trigger sending on another thread (a timer's) moves the source and its values there unchecked, as `concatMap` subscribes its next inner signal on the thread that completed the previous one
    typealias Value = Source.Value

    private let source: Source
    private let errors: Subject<any Error>
    private let forwarder: SerialForwarder<Value>
    private let state = Lock(RetryWhenState())
    /// The live attempt's subscription.
    private let current = SerialDisposable()

    init(source: Source, errors: Subject<any Error>, downstream: any SubscriberProtocol<Value>) {
        self.source = source
        self.errors = errors
        forwarder = SerialForwarder(downstream)
    }

    var isDisposed: Bool { current.isDisposed }

    func dispose() {
        state.withLock { $0.dispose() }
        current.dispose()
    }

    /// Runs the first attempt.
    func start() {
        state.withLock { $0.startFirst() }
        loop()
    }

    func triggerSent() {
        if state.withLock({ $0.triggerSent() }) { loop() }
    }

    func triggerEnded(_ end: RetryWhenState.End) {
        guard let end = state.withLock({ $0.triggerEnded(end) }) else { return }
        forward(end)
    }

    private func failed(_ error: any Error) {
        switch state.withLock({ $0.attemptFailed() }) {
        case .ignore: return
        case .publish: errors.sendNext(error)
        case .end(let end): forward(end)
        }
    }

    private func forward(_ end: RetryWhenState.End) {
        switch end {
        case .completed: forwarder.send(.completed)
        case .error(let error): forwarder.send(.error(error))
        }
    }

    /// Starts the due attempt, or leaves it to the thread already running the loop.
    private func loop() {
        guard state.withLock({ $0.startLoop() }) else { return }
        while state.withLock({ $0.nextAttempt() }) {
            // The attempt takes the slot (disposing the ended one before it) before its producer
            // runs (`subscribe(linking:)`): disposing the driver stops a synchronous attempt at once.
            source.subscribe(
                linking: { current.disposable = $0 },
                next: { [forwarder] in forwarder.send(.next($0)) },
                error: { [self] in failed($0) },
                completed: { [self] in
                    if state.withLock({ $0.attemptCompleted() }) { forwarder.send(.completed) }
                })
        }
    }
}
