extension SignalProtocol {
    /// Maps each value to a signal and merges their events, running at most `maxConcurrent` of
    /// them at once (RxSwift's `merge(maxConcurrent:)`, ReactiveSwift's `flatMap(.concurrent(limit:))`).
    ///
    ///     source:  12(3|)
    ///     inner:   -a--b|          (each value's run)
    ///     result:  -aa-bba--b|     (maxConcurrent 2: 3's run starts at 50 ms, when 1's ends)
    ///
    /// `transform` runs as each value arrives; an inner signal beyond the limit waits in a queue,
    /// in arrival order, and is subscribed when a running one completes. The result completes
    /// when upstream and every inner signal have completed. The first error, from upstream or
    /// any inner signal, is forwarded at once and disposes everything else, queued signals
    /// included; so does disposing the result. With a limit of 1 it is `concatMap`. Inner signals
    /// that complete during their own subscribe are subscribed in a loop, not recursively, so a
    /// million of them run in constant stack.
    ///
    ///     let pages = urls.flatMap(maxConcurrent: 4) { url in download(url) }
    ///
    /// - Parameters:
    ///   - maxConcurrent: The most inner signals subscribed at once; 1 or more.
    ///   - transform: Makes the inner signal for a value.
    /// - Returns: A signal of every inner signal's values.
    /// - Precondition: `maxConcurrent` is 1 or more.
    public func flatMap<Inner: SignalProtocol>(
        maxConcurrent: Int, _ transform: @escaping (Value) -> Inner
    ) -> Signal<Inner.Value> {
        precondition(maxConcurrent >= 1, "flatMap(maxConcurrent:) needs a limit of 1 or more, got \(maxConcurrent)")
        return Signal { downstream in
            // The driver joins this subscription before anything runs, then upstream's
            // subscription before its producer runs (`subscribe(linking:)`); the driver links
            // each inner subscription into its slot before that one runs. Ending this
            // subscription while any of them sends synchronously stops it at once.
            let driver = BoundedMergeDriver<Inner.Value>(limit: maxConcurrent, downstream: downstream)
            downstream.disposable.add(driver)
            self.subscribe(
                linkingInto: downstream.disposable,
                next: { driver.enqueue(transform($0).asSignal()) },
                error: { driver.fail($0) },
                completed: { driver.outerCompleted() })
            return nil
        }
    }
}

extension SignalProtocol where Value: SignalProtocol {
    /// Merges the events of the inner signals this signal sends, running at most
    /// `maxConcurrent` of them at once (RxSwift's `merge(maxConcurrent:)`).
    ///
    ///     source:  abc|            (three inner signals, each -x--y|)
    ///     result:  -xx-yyx--y|     (maxConcurrent 2: c is subscribed at 50 ms, when a completes)
    ///
    /// Inner signals beyond the limit wait in arrival order; see `flatMap(maxConcurrent:_:)`.
    ///
    ///     let downloads = requests.merge(maxConcurrent: 2)
    ///
    /// - Parameter maxConcurrent: The most inner signals subscribed at once; 1 or more.
    /// - Returns: A signal of every inner signal's values.
    /// - Precondition: `maxConcurrent` is 1 or more.
    public func merge(maxConcurrent: Int) -> Signal<Value.Value> {
        precondition(maxConcurrent >= 1, "merge(maxConcurrent:) needs a limit of 1 or more, got \(maxConcurrent)")
        return flatMap(maxConcurrent: maxConcurrent) { $0 }
    }
}

/// One `flatMap(maxConcurrent:)` subscription: the locked `BoundedMergeState` (its invariants
/// live there) and the subscriptions of the running inner signals.
final class BoundedMergeDriver<Value>: Disposable, Sendable {
    private let forwarder: SerialForwarder<Value>
    private let state: Lock<BoundedMergeState<Signal<Value>>>
    /// The running inner signals' subscriptions, one slot each.
    private let inners = CompoundDisposable()

    init(limit: Int, downstream: any SubscriberProtocol<Value>) {
        forwarder = SerialForwarder(downstream)
        state = Lock(BoundedMergeState(limit: limit))
    }

    var isDisposed: Bool { inners.isDisposed }

    func dispose() {
        let dropped = state.withLock { $0.dispose() }
        inners.dispose()
        _ = dropped  // released after unlocking: a signal's closures may hold user objects
    }

    func enqueue(_ inner: Signal<Value>) {
        let accepted = state.withLock { $0.enqueue(inner) }
        if accepted { advance() }
    }

    func outerCompleted() {
        state.withLock { $0.outerCompleted() }
        advance()
    }

    func fail(_ error: any Error) {
        let (isFirst, dropped) = state.withLock { $0.fail() }
        if isFirst { forwarder.send(.error(error)) }  // its end disposes this driver, and so every inner
        _ = dropped
    }

    private func innerCompleted(_ slot: SerialDisposable) {
        inners.remove(slot)
        state.withLock { $0.innerCompleted() }
        advance()
    }

    /// Runs the subscribe loop, or leaves the work to the thread already running it.
    private func advance() {
        guard state.withLock({ $0.startLoop() }) else { return }
        while true {
            let step = state.withLock { state in
                let step = state.nextStep()
                if case .complete = step { forwarder.enqueue(.completed) }
                return step
            }
            switch step {
            case .subscribe(let inner):
                // The slot is in `inners` before the inner subscription, which takes it before its
                // producer runs (`subscribe(linking:)`): disposing the driver stops a synchronous
                // inner signal at once. The slot leaves `inners` when its inner signal completes.
                let slot = SerialDisposable()
                inners.add(slot)
                inner.subscribe(
                    linking: { slot.disposable = $0 },
                    next: { [forwarder] in forwarder.send(.next($0)) },
                    error: { [self] in fail($0) },
                    completed: { [self] in innerCompleted(slot) })
            case .complete:
                return forwarder.drain()
            case .stop:
                return
            }
        }
    }
}
