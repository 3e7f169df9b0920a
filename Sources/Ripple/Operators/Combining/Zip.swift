extension Signal {
    /// Sends arrays of the n-th value of every signal, in order (RAC's `zip:`).
    ///
    ///     a:      -1-2---3-|
    ///     b:      ---x-y---z|
    ///     result: ---(1x)-(2y)-(3z)|
    ///
    /// Values wait until every signal has sent its n-th. Completes once a completed signal
    /// has no waiting value left (nothing more can be paired); the first error is forwarded.
    /// An empty array completes at once.
    public static func zip(_ signals: [any SignalProtocol<Value>]) -> Signal<[Value]> {
        if signals.isEmpty { return .empty }
        return Signal<[Value]> { downstream in
            ZipDriver<Value>(count: signals.count, downstream: downstream).subscribe(to: signals, for: downstream)
            return nil
        }
    }
}

extension SignalProtocol {
    /// Pairs the n-th values of `self` and `other`.
    ///
    ///     a.zip(b)   // Signal<(A, B)>
    public func zip<B: SignalProtocol>(_ other: B) -> Signal<(Value, B.Value)> {
        Signal<Any>.zip([erased(), other.erased()]).map { ($0[0] as! Value, $0[1] as! B.Value) }
    }

    /// Combines the n-th values of three signals.
    ///
    ///     a.zip(b, c)   // Signal<(A, B, C)>
    public func zip<B: SignalProtocol, C: SignalProtocol>(_ b: B, _ c: C) -> Signal<(Value, B.Value, C.Value)> {
        Signal<Any>.zip([erased(), b.erased(), c.erased()])
            .map { ($0[0] as! Value, $0[1] as! B.Value, $0[2] as! C.Value) }
    }

    /// Combines the n-th values of four signals.
    ///
    ///     source: -1---2---|
    ///     b:      --x---y--|
    ///     c:      ---p---q-|
    ///     d:      ----u---v|
    ///     zip:    ----a---b|    (a = (1,x,p,u), b = (2,y,q,v))
    ///
    /// Values wait until all four have sent their n-th; completes once a completed signal has
    /// no waiting value left; the first error is forwarded (as `zip(_:)`).
    ///
    ///     name.zip(age, city, email)   // Signal<(String, Int, String, String)>
    public func zip<B: SignalProtocol, C: SignalProtocol, D: SignalProtocol>(
        _ b: B, _ c: C, _ d: D
    ) -> Signal<(Value, B.Value, C.Value, D.Value)> {
        Signal<Any>.zip([erased(), b.erased(), c.erased(), d.erased()])
            .map { ($0[0] as! Value, $0[1] as! B.Value, $0[2] as! C.Value, $0[3] as! D.Value) }
    }

    /// Combines the n-th values of five signals.
    ///
    ///     source: -1----|
    ///     b … e:  --x---|   (each sends one value, at 20 ms)
    ///     zip:    --a---|   (a = the five first values, once the last of them arrives)
    ///
    /// Values wait until all five have sent their n-th; completes once a completed signal has
    /// no waiting value left; the first error is forwarded (as `zip(_:)`).
    ///
    ///     a.zip(b, c, d, e)   // Signal<(A, B, C, D, E)>
    public func zip<B: SignalProtocol, C: SignalProtocol, D: SignalProtocol, E: SignalProtocol>(
        _ b: B, _ c: C, _ d: D, _ e: E
    ) -> Signal<(Value, B.Value, C.Value, D.Value, E.Value)> {
        Signal<Any>.zip([erased(), b.erased(), c.erased(), d.erased(), e.erased()])
            .map { ($0[0] as! Value, $0[1] as! B.Value, $0[2] as! C.Value, $0[3] as! D.Value, $0[4] as! E.Value) }
    }
}

/// The state of one `zip` subscription: a queue of waiting values per source.
final class ZipDriver<Value>: IndexedSourcesDriver, Sendable {
    /// Guarded by `state`.
    private struct State: @unchecked Sendable {  // values stay inside but for the tuples moved into the forwarder under the lock
        var waiting: [FIFOQueue<Value>]
        var completed: [Bool]
        var finished = false

        /// Whether some completed source has nothing left to pair.
        var isExhausted: Bool {
            for index in waiting.indices where completed[index] && waiting[index].isEmpty { return true }
            return false
        }
    }

    private let forwarder: SerialForwarder<[Value]>
    private let state: Lock<State>

    init(count: Int, downstream: any SubscriberProtocol<[Value]>) {
        forwarder = SerialForwarder(downstream)
        state = Lock(State(waiting: Array(repeating: FIFOQueue(), count: count),
                           completed: Array(repeating: false, count: count)))
    }

    func next(_ value: Value, at index: Int) {
        let send = state.withLock { state in
            if state.finished { return false }
            state.waiting[index].append(value)
            guard state.waiting.allSatisfy({ !$0.isEmpty }) else { return false }
            var tuple: [Value] = []
            tuple.reserveCapacity(state.waiting.count)
            for source in state.waiting.indices { tuple.append(state.waiting[source].popFirst().unsafelyUnwrapped) }
            forwarder.enqueue(.next(tuple))
            if state.isExhausted {
                state.finished = true
                forwarder.enqueue(.completed)
            }
            return true
        }
        if send { forwarder.drain() }
    }

    func completed(at index: Int) {
        let done = state.withLock { state in
            if state.finished { return false }
            state.completed[index] = true
            guard state.isExhausted else { return false }
            state.finished = true
            forwarder.enqueue(.completed)
            return true
        }
        if done { forwarder.drain() }
    }

    func fail(_ error: any Error) {
        state.withLock { $0.finished = true }
        forwarder.send(.error(error))  // dropped if the stream already ended
    }
}
