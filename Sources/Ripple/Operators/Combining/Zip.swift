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
