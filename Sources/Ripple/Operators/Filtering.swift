extension SignalProtocol {
    /// Sends the first `count` values, then completes (RAC's `take:`).
    ///
    ///     source: -1-2-3-4-|
    ///     take:   -1-(2|)      (2)
    ///
    /// `take(0)` completes at once without subscribing upstream. Completing disposes upstream.
    public func take(_ count: Int) -> Signal<Value> {
        precondition(count >= 0, "take(_:) needs a count of zero or more, got \(count)")
        if count == 0 { return .empty }
        return lift { downstream in
            var remaining = count
            return .relay(to: downstream, next: { value in
                guard remaining > 0 else { return }
                remaining -= 1
                downstream.sendNext(value)
                if remaining == 0 { downstream.sendCompleted() }
            })
        }
    }

    /// Drops the first `count` values (RAC's `skip:`).
    ///
    ///     source: -1-2-3-|
    ///     skip:   -----3-|    (2)
    public func skip(_ count: Int) -> Signal<Value> {
        precondition(count >= 0, "skip(_:) needs a count of zero or more, got \(count)")
        return lift { downstream in
            var remaining = count
            return .relay(to: downstream, next: { value in
                if remaining > 0 { remaining -= 1 } else { downstream.sendNext(value) }
            })
        }
    }

    /// Forwards values while `predicate` holds; completes at the first value that fails it.
    ///
    ///     source: -1-2-5-1-|
    ///     take:   -1-2-|       ({ $0 < 3 })
    public func take(while predicate: @escaping (Value) -> Bool) -> Signal<Value> {
        lift { downstream in
            .relay(to: downstream, next: { value in
                if predicate(value) { downstream.sendNext(value) } else { downstream.sendCompleted() }
            })
        }
    }

    /// Drops values while `predicate` holds; forwards everything from the first that fails it.
    ///
    ///     source: -1-2-5-1-|
    ///     skip:   -----5-1-|   ({ $0 < 3 })
    public func skip(while predicate: @escaping (Value) -> Bool) -> Signal<Value> {
        lift { downstream in
            var skipping = true
            return .relay(to: downstream, next: { value in
                if skipping && predicate(value) { return }
                skipping = false
                downstream.sendNext(value)
            })
        }
    }

    /// Forwards events until `trigger` sends a value or completes, then completes (RAC's `takeUntil:`).
    ///
    ///     source:  -1-2-3-4-|
    ///     trigger: -----x
    ///     result:  -1-2-|
    ///
    /// An error from `trigger` is forwarded. Both subscriptions end with the result — at once,
    /// even while either is a synchronous source still sending from inside its subscribe.
    public func take<Trigger: SignalProtocol>(until trigger: Trigger) -> Signal<Value> {
        Signal { downstream in
            let forwarder = SerialForwarder(downstream)
            // Each subscription joins this one before its producer runs (`subscribe(linking:)`):
            // the trigger firing from inside the source's loop (or the source ending the result
            // from inside the trigger's) disposes the other, which then stops at once.
            trigger.subscribe(
                linkingInto: downstream.disposable,
                next: { _ in forwarder.send(.completed) },
                error: { forwarder.send(.error($0)) },
                completed: { forwarder.send(.completed) })
            if downstream.isDisposed { return nil }
            self.subscribe(
                linkingInto: downstream.disposable,
                next: { forwarder.send(.next($0)) },
                error: { forwarder.send(.error($0)) },
                completed: { forwarder.send(.completed) })
            return nil
        }
    }

    /// The first value, then completion; completes without a value if upstream is empty.
    ///
    ///     source: -1-2-3-|
    ///     first:  -(1|)
    public func first() -> Signal<Value> {
        take(1)
    }

    /// The last value once upstream completes, then completion; nothing for an empty source.
    ///
    ///     source: -1-2-3-|
    ///     last:   -------(3|)
    public func last() -> Signal<Value> {
        lift { downstream in
            var latest: Value?
            return .relay(
                to: downstream,
                next: { latest = $0 },
                completed: {
                    if let latest { downstream.sendNext(latest) }
                    downstream.sendCompleted()
                })
        }
    }
}
