extension SignalProtocol {
    /// Sends values in arrays of `count` (RxSwift's `buffer(count:)`).
    ///
    ///     source: -1-2-3-4-5-|
    ///     buffer: ---a---b---(c|)    (2: a = [1,2], b = [3,4], c = [5])
    ///
    /// Completion sends a partial array still waiting, then completes; an error drops it.
    public func buffer(count: Int) -> Signal<[Value]> {
        precondition(count >= 1, "buffer(count:) needs a count of at least 1, got \(count)")
        return lift { downstream in
            var waiting: [Value] = []
            return .relay(
                to: downstream,
                next: { value in
                    waiting.append(value)
                    if waiting.count == count {
                        let full = waiting
                        waiting = []
                        downstream.sendNext(full)
                    }
                },
                completed: {
                    if !waiting.isEmpty { downstream.sendNext(waiting) }
                    downstream.sendCompleted()
                })
        }
    }

    /// Sends the values that arrived during each `timeSpan`, as one array at its end
    /// (RAC's `bufferWithTime:onScheduler:`); a span with no values sends nothing.
    ///
    ///     source: -1-2---3-----|
    ///     buffer: -----a----b--|     (50 ms: a = [1,2], b = [3])
    ///
    /// Completion sends what is waiting, then completes; an error drops it. On
    /// ``ImmediateScheduler`` the spans never let subscribe return: each span's end re-arms the
    /// next inside the scheduler's trampoline, for as long as the subscription lasts. Use a
    /// scheduler that waits instead (a ``SerialQueueScheduler``, ``BackgroundScheduler`` or
    /// ``TestScheduler``).
    public func buffer(timeSpan: Duration, on scheduler: any Scheduler) -> Signal<[Value]> where Value: Sendable {
        precondition(timeSpan > .zero, "buffer(timeSpan:on:) needs a positive time span, got \(timeSpan)")
        return Signal { downstream in
            let driver = TimeBufferDriver<Value>(downstream)
            // The ticks, then the source's subscription, join this one before their producers
            // run (`subscribe(linking:)`): ending it while a synchronous source sends stops it at once.
            Signal<Int>.interval(timeSpan, on: scheduler).subscribe(
                linkingInto: downstream.disposable,
                next: { _ in driver.flush() }, error: nil, completed: nil)
            self.subscribe(
                linkingInto: downstream.disposable,
                next: { driver.append($0) },
                error: { driver.finish(.error($0)) },
                completed: { driver.finish(.completed) })
            return nil
        }
    }

    /// Sends the latest value of `self` each time `sampler` sends, once `self` has sent one
    /// (RAC's `sample:`). Completes when either completes; errors from either are forwarded.
    ///
    ///     source:  -1-2---3---|
    ///     sampler: ---x-x---x-|
    ///     sample:  ---2-2---3-|
    public func sample<Sampler: SignalProtocol>(_ sampler: Sampler) -> Signal<Value> {
        sample(sampler, startingWith: nil)
    }

    /// Sends the latest value of `self` each time `sampler` sends, and `initial` for the ticks
    /// before `self` has sent a value.
    ///
    ///     source:  ---1---2---|
    ///     sampler: -x---x---x-|
    ///     sample:  -0---1---2-|    (default 0)
    ///
    /// Otherwise `sample(_:)`: the latest value is sent again at every tick until a newer one
    /// comes (RAC's `sample:`), so `initial` stands only for the ticks before the first value.
    /// RxSwift's `sample(_:defaultValue:)` differs: it sends only values new since the last
    /// tick, and its default for every tick without one. Completes when either completes;
    /// errors from either are forwarded.
    ///
    ///     temperature.sample(everySecond, default: .nan)   // a reading each second, from the first
    ///
    /// - Parameters:
    ///   - sampler: The signal whose values ask for a sample.
    ///   - initial: What a tick sends before `self` has sent a value.
    /// - Returns: A signal of one value per tick of `sampler`.
    public func sample<Sampler: SignalProtocol>(_ sampler: Sampler, default initial: Value) -> Signal<Value> {
        sample(sampler, startingWith: initial)
    }

    /// `sample(_:)` whose latest value starts as `initial` (nil: no tick sends until `self` has sent).
    private func sample<Sampler: SignalProtocol>(_ sampler: Sampler, startingWith initial: Value?) -> Signal<Value> {
        Signal { downstream in
            let forwarder = SerialForwarder(downstream)
            let latest = Lock(UncheckedSendable<Value?>(initial))
            // Each subscription joins this one before its producer runs (`subscribe(linking:)`):
            // ending it while either sends synchronously stops that one at once.
            self.subscribe(
                linkingInto: downstream.disposable,
                next: { value in
                    let replaced = latest.withLock { latest in
                        defer { latest.value = value }
                        return latest.value
                    }
                    _ = replaced  // released outside the lock: its deinit is user code
                },
                error: { forwarder.send(.error($0)) },
                completed: { forwarder.send(.completed) })
            sampler.subscribe(
                linkingInto: downstream.disposable,
                next: { _ in
                    latest.withLock { if let value = $0.value { forwarder.enqueue(.next(value)) } }
                    forwarder.drain()
                },
                error: { forwarder.send(.error($0)) },
                completed: { forwarder.send(.completed) })
            return nil
        }
    }
}

/// One `buffer(timeSpan:on:)` subscription: the values of the current span.
final class TimeBufferDriver<Value>: @unchecked Sendable {  // state behind its lock; only buffer(timeSpan:on:) makes one, and it requires Sendable values
    /// Guarded by `state`.
    private struct State: @unchecked Sendable {  // holds Sendable values (see buffer's constraint) and the subscriber, only under the lock
        var waiting: [Value] = []
        var finished = false
    }

    private let forwarder: SerialForwarder<[Value]>
    private let state = Lock(State())

    init(_ downstream: any SubscriberProtocol<[Value]>) {
        forwarder = SerialForwarder(downstream)
    }

    func append(_ value: Value) {
        state.withLock { state in
            if !state.finished { state.waiting.append(value) }
        }
    }

    func flush() {
        let sent: [Value] = state.withLock { state in
            if state.finished || state.waiting.isEmpty { return [] }
            forwarder.enqueue(.next(state.waiting))
            defer { state.waiting = [] }
            return state.waiting
        }
        forwarder.drain()
        _ = sent  // released after delivering, outside the lock
    }

    func finish(_ event: Event<[Value]>) {
        let flushed: [Value] = state.withLock { state in
            if state.finished { return [] }
            state.finished = true
            if case .completed = event, !state.waiting.isEmpty { forwarder.enqueue(.next(state.waiting)) }
            forwarder.enqueue(event)
            defer { state.waiting = [] }
            return state.waiting
        }
        forwarder.drain()
        _ = flushed  // released after delivering, outside the lock: an error drops these values
    }
}
