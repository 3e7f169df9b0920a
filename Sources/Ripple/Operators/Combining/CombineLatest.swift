extension Signal {
    /// Sends an array of every signal's latest value whenever any of them sends, once all
    /// have sent at least one (RAC's `combineLatest:`).
    ///
    ///     a:      -1---2-----|
    ///     b:      ---x---y-|
    ///     result: ---(1x)-(2x)-(2y)--|
    ///
    /// Completes when every signal has completed, or at once when one completes without
    /// ever sending (no combination is possible). The first error is forwarded. Works for
    /// any number of signals (tested with 100); an empty array completes at once.
    public static func combineLatest(_ signals: [any SignalProtocol<Value>]) -> Signal<[Value]> {
        if signals.isEmpty { return .empty }
        return Signal<[Value]> { downstream in
            CombineLatestDriver<Value>(count: signals.count, downstream: downstream).subscribe(to: signals, for: downstream)
            return nil
        }
    }
}

extension SignalProtocol {
    /// Pairs the latest values of `self` and `other` whenever either sends, once both have.
    ///
    ///     a.combineLatest(b)   // Signal<(A, B)>
    public func combineLatest<B: SignalProtocol>(_ other: B) -> Signal<(Value, B.Value)> {
        Signal<Any>.combineLatest([erased(), other.erased()]).map { ($0[0] as! Value, $0[1] as! B.Value) }
    }

    /// Combines the latest values of three signals whenever any sends, once all have.
    ///
    ///     a.combineLatest(b, c)   // Signal<(A, B, C)>
    public func combineLatest<B: SignalProtocol, C: SignalProtocol>(_ b: B, _ c: C) -> Signal<(Value, B.Value, C.Value)> {
        Signal<Any>.combineLatest([erased(), b.erased(), c.erased()])
            .map { ($0[0] as! Value, $0[1] as! B.Value, $0[2] as! C.Value) }
    }

    /// Combines the latest values of four signals whenever any sends, once all have.
    ///
    ///     source: -1-----2---|
    ///     b:      --x--------|
    ///     c:      ---p-------|
    ///     d:      ----u---v--|
    ///     result: ----a--bc--|   (a = (1,x,p,u), b = (2,x,p,u), c = (2,x,p,v))
    ///
    /// Completes when all four have completed, or at once when one completes without ever
    /// sending; the first error is forwarded (as `combineLatest(_:)`).
    ///
    ///     host.combineLatest(port, user, password)   // Signal<(String, Int, String, String)>
    public func combineLatest<B: SignalProtocol, C: SignalProtocol, D: SignalProtocol>(
        _ b: B, _ c: C, _ d: D
    ) -> Signal<(Value, B.Value, C.Value, D.Value)> {
        Signal<Any>.combineLatest([erased(), b.erased(), c.erased(), d.erased()])
            .map { ($0[0] as! Value, $0[1] as! B.Value, $0[2] as! C.Value, $0[3] as! D.Value) }
    }

    /// Combines the latest values of five signals whenever any sends, once all have.
    ///
    ///     source: -1---2-|
    ///     b … e:  --x----|   (each sends one value, by 20 ms)
    ///     result: --a--b-|   (a = (1,x,…), b = (2,x,…))
    ///
    /// Completes when all five have completed, or at once when one completes without ever
    /// sending; the first error is forwarded (as `combineLatest(_:)`).
    ///
    ///     a.combineLatest(b, c, d, e)   // Signal<(A, B, C, D, E)>
    public func combineLatest<B: SignalProtocol, C: SignalProtocol, D: SignalProtocol, E: SignalProtocol>(
        _ b: B, _ c: C, _ d: D, _ e: E
    ) -> Signal<(Value, B.Value, C.Value, D.Value, E.Value)> {
        Signal<Any>.combineLatest([erased(), b.erased(), c.erased(), d.erased(), e.erased()])
            .map { ($0[0] as! Value, $0[1] as! B.Value, $0[2] as! C.Value, $0[3] as! D.Value, $0[4] as! E.Value) }
    }

    /// `self` with its values boxed as `Any`, so signals of different types can be combined.
    func erased() -> any SignalProtocol<Any> {
        map { $0 as Any }
    }
}

/// The state of one `combineLatest` subscription.
final class CombineLatestDriver<Value>: IndexedSourcesDriver, Sendable {
    /// Guarded by `state`.
    private struct State: @unchecked Sendable {  // values stay inside but for copies enqueued on the forwarder and the replaced one, released after unlocking
        var latest: [Value?]
        var haveValue = 0
        var completedCount = 0
        var finished = false
    }

    private let forwarder: SerialForwarder<[Value]>
    private let state: Lock<State>

    init(count: Int, downstream: any SubscriberProtocol<[Value]>) {
        forwarder = SerialForwarder(downstream)
        state = Lock(State(latest: Array(repeating: nil, count: count)))
    }

    func next(_ value: Value, at index: Int) {
        var replaced: Value?
        defer { _ = replaced }  // released outside the lock, after delivering: its deinit is user code
        let send = state.withLock { state in
            if state.finished { return false }
            replaced = state.latest[index]
            if replaced == nil { state.haveValue += 1 }
            state.latest[index] = value
            guard state.haveValue == state.latest.count else { return false }
            forwarder.enqueue(.next(state.latest.map { $0.unsafelyUnwrapped }))
            return true
        }
        if send { forwarder.drain() }
    }

    func completed(at index: Int) {
        let done = state.withLock { state in
            if state.finished { return false }
            state.completedCount += 1
            guard state.completedCount == state.latest.count || state.latest[index] == nil else { return false }
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
