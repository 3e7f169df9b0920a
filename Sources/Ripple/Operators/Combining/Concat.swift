extension SignalProtocol {
    /// Maps each value to a signal and runs them one after another (RAC's `concat` of a signal of signals).
    ///
    ///     source:  -a-b------|
    ///     inner a:  1--2|
    ///     inner b:       3|
    ///     result:  --1--23---|
    ///
    /// The next inner signal is subscribed only when the previous one completes; values that
    /// arrive meanwhile wait in order. Completes when upstream and the last inner signal have
    /// completed; the first error is forwarded. Inner signals that complete at once are
    /// subscribed in a loop, not recursively, so a million of them run in constant stack.
    public func concatMap<Inner: SignalProtocol>(_ transform: @escaping (Value) -> Inner) -> Signal<Inner.Value> {
        Signal { downstream in
            // The driver joins this subscription before anything runs, then upstream's
            // subscription before its producer runs (`subscribe(linking:)`); the driver links
            // each inner subscription into its slot before that one runs. Ending this
            // subscription while any of them sends synchronously stops it at once.
            let driver = ConcatDriver<Inner.Value>(downstream)
            downstream.disposable.add(driver)
            self.subscribe(
                linkingInto: downstream.disposable,
                next: { driver.enqueue(transform($0).asSignal()) },
                error: { driver.fail($0) },
                completed: { driver.outerCompleted() })
            return nil
        }
    }

    /// `self`'s events, then `other`'s once `self` completes (RAC's `concat:`).
    ///
    ///     a:      -1-2|
    ///     b:          -3|
    ///     concat: -1-2-3|
    public func concat<Other: SignalProtocol>(_ other: Other) -> Signal<Value> where Other.Value == Value {
        Signal<Value>.concat([self, other])
    }

    /// `other`'s events once `self` completes; `self`'s values are ignored (RAC's `then:`).
    ///
    ///     a:    -1-2|
    ///     b:        -x|
    ///     then: -----x|
    public func then<Other: SignalProtocol>(_ other: Other) -> Signal<Other.Value> {
        Signal { downstream in
            // Each subscription (the second is made at most once) joins this one before its
            // producer runs (`subscribe(linking:)`): ending this subscription while either sends
            // synchronously stops it at once.
            self.subscribe(
                linkingInto: downstream.disposable,
                next: nil,
                error: { downstream.sendError($0) },
                completed: { other.subscribe(downstream, linkingInto: downstream.disposable) })
            return nil
        }
    }
}

extension Signal {
    /// Every signal's events in turn, each subscribed when the previous one completes.
    ///
    ///     Signal.concat([a, b, c])
    public static func concat(_ signals: [any SignalProtocol<Value>]) -> Signal<Value> {
        Signal<any SignalProtocol<Value>>.from(signals).concatMap { $0.asSignal() }
    }
}

/// The state of one `concatMap` subscription: the inner signals waiting their turn and
/// whether one is running. A drain loop subscribes them one by one; an inner signal that
/// completes during its own subscribe call only flags the loop to continue.
final class ConcatDriver<Value>: Disposable, Sendable {
    /// Guarded by `state`.
    private struct State: @unchecked Sendable {  // only Sendable fields, but `FIFOQueue` declares no conformance; guarded by `state`
        var queue = FIFOQueue<Signal<Value>>()
        /// An inner signal is subscribed and has not completed.
        var isBusy = false
        /// A thread is running the drain loop.
        var isLooping = false
        /// Something changed while the loop ran; it must look again.
        var mustLoopAgain = false
        var outerDone = false
        var finished = false
    }

    private let forwarder: SerialForwarder<Value>
    private let state = Lock(State())
    private let current = SerialDisposable()

    init(_ downstream: any SubscriberProtocol<Value>) {
        forwarder = SerialForwarder(downstream)
    }

    var isDisposed: Bool { current.isDisposed }

    func dispose() {
        current.dispose()
        let dropped = state.withLock { state in
            state.finished = true
            return state.queue.removeAll()
        }
        _ = dropped
    }

    func enqueue(_ inner: Signal<Value>) {
        state.withLock { state in
            if !state.finished { state.queue.append(inner) }
        }
        advance()
    }

    func outerCompleted() {
        state.withLock { $0.outerDone = true }
        advance()
    }

    func fail(_ error: any Error) {
        state.withLock { $0.finished = true }
        forwarder.send(.error(error))  // dropped if the stream already ended
    }

    private func innerCompleted() {
        state.withLock { $0.isBusy = false }
        advance()
    }

    private enum Step {
        case subscribe(Signal<Value>)
        case complete
        case idle
    }

    /// Runs the drain loop, or asks the thread already running it to look again.
    private func advance() {
        let mine = state.withLock { state in
            if state.isLooping {
                state.mustLoopAgain = true
                return false
            }
            state.isLooping = true
            return true
        }
        guard mine else { return }
        while true {
            let step: Step = state.withLock { state in
                state.mustLoopAgain = false
                if state.finished || state.isBusy { return .idle }
                if let next = state.queue.popFirst() {
                    state.isBusy = true
                    return .subscribe(next)
                }
                if state.outerDone {
                    state.finished = true
                    forwarder.enqueue(.completed)
                    return .complete
                }
                return .idle
            }
            switch step {
            case .subscribe(let inner):
                // The inner subscription takes the slot (disposing the completed one before it)
                // before its producer runs: disposing the driver stops a synchronous inner signal
                // at once, and 100,000 inner signals leave one subscription behind.
                inner.subscribe(
                    linking: { current.disposable = $0 },
                    next: { [forwarder] in forwarder.send(.next($0)) },
                    error: { [self] in fail($0) },
                    completed: { [self] in innerCompleted() })
            case .complete:
                forwarder.drain()
            case .idle:
                break
            }
            let again = state.withLock { state in
                if state.mustLoopAgain { return true }
                state.isLooping = false
                return false
            }
            if !again { return }
        }
    }
}
