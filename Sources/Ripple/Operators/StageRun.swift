/// A run of consecutive one-to-one synchronous operators — `map`, `filter`, `compactMap`,
/// `scan` — over one source, composed into a single relay (stage fusion, <doc:DeliveryTurn>).
///
/// Unfused, each of these operators would subscribe a relay `Subscriber` of its own to the
/// stage before it: per value and stage a passthrough, a status check, a closure lookup and two
/// closure calls. Composed, a run's stages call each other's closures directly and the whole
/// run costs one relay, one passthrough and one compound per subscription; per value each stage
/// costs its closure, the user's closure, and one check that the subscription was not disposed
/// (`StageOutput.sendNext`).
///
/// `Signal.stageRun` holds the run a signal ends with: an operator of the family applied to such
/// a signal extends the run (`SignalProtocol.fuse`) instead of subscribing to it, up to
/// `maxLength` stages; after that, or on any other source, it starts a new run whose relay
/// subscribes to the source like `lift`'s.
///
/// The standard building blocks don't fit: the source's value type is unknown where a stage is
/// appended, so a run is kept as a closure (`attach`) that knows it; every closure is created in
/// code specialized for its types, so a value passes no generic indirection.
@usableFromInline
struct StageRun<Output> {
    /// The most stages one run composes. It bounds the closures nested at subscribe time and the
    /// frames between two stack checks (a run's relay stands for `length` relay levels).
    @inlinable static var maxLength: UInt32 { 8 }

    /// How many operators the run composes (1...`maxLength`).
    @usableFromInline let length: UInt32

    /// For one subscription: makes the run's stages, the last one sending to `next`, and
    /// subscribes the relay that heads them to the run's source; terminal events go to `end`.
    @usableFromInline let attach: (_ next: @escaping (Output) -> Void, _ end: StageRunEnd) -> Void

    @inlinable
    init(length: UInt32, attach: @escaping (_ next: @escaping (Output) -> Void, _ end: StageRunEnd) -> Void) {
        self.length = length
        self.attach = attach
    }
}

/// What a run's relay needs of the subscription it feeds, whatever the run's value types.
@usableFromInline
struct StageRunEnd {
    /// The downstream's `sendError` and `sendCompleted`: the relay's terminal callbacks.
    @usableFromInline let error: (any Error) -> Void
    @usableFromInline let completed: () -> Void
    /// The relay's depth: the downstream subscriber's plus the run's length (each stage counts
    /// as a level for the deep-chain stack checks).
    @usableFromInline let relayDepth: UInt32
    /// The run's length: the relay levels its relay stands for.
    @usableFromInline let levels: UInt32
    /// The downstream subscription's compound: the relay's upstream subscription joins it, and
    /// every stage checks it before handing a value on.
    @usableFromInline let subscription: CompoundDisposable

    @inlinable
    init<Value>(feeding downstream: PassthroughSubscriber<Value>, levels: UInt32) {
        error = { downstream.sendError($0) }
        completed = { downstream.sendCompleted() }
        relayDepth = downstream.relayDepth &+ levels
        self.levels = levels
        subscription = downstream.disposable
    }
}

/// Where a stage of a run sends its values: the next stage's closure (or the subscription's
/// passthrough, after the last stage).
///
/// `sendNext` first checks the subscription: a dispose from inside a stage's closure (or from
/// another thread) stops the value before the next stage's closure, as a relay between unfused
/// operators does; the run's relay checks before the first stage, the subscriber after the last.
@usableFromInline
struct StageOutput<Value> {
    @usableFromInline let next: (Value) -> Void
    @usableFromInline let subscription: CompoundDisposable

    @inlinable
    init(next: @escaping (Value) -> Void, subscription: CompoundDisposable) {
        self.next = next
        self.subscription = subscription
    }

    /// Hands `value` to the next stage unless the subscription was disposed.
    @inlinable @inline(__always)
    func sendNext(_ value: Value) {
        if !subscription.isDisposed { next(value) }
    }
}

extension Signal {
    /// A signal that runs `run`: subscribing attaches the run's stages, ending in the
    /// subscription's passthrough, and subscribes its relay to the run's source.
    ///
    /// It sends serially (the run's stages call the passthrough only from inside the relay's
    /// callbacks), so a stage subscribed to it is fused too.
    @inlinable
    convenience init(stageRun run: StageRun<Value>) {
        let attach = run.attach
        let levels = run.length
        self.init(sendsSerially: true, stageRun: run) { downstream in
            attach({ downstream.sendNext($0) }, StageRunEnd(feeding: downstream, levels: levels))
            return nil
        }
    }
}

extension SignalProtocol {
    /// Builds a one-to-one synchronous operator as a stage of a run (`StageRun`): for each
    /// subscription, `makeStage` receives where to send and returns the closure that handles
    /// each upstream value.
    ///
    /// The stage's closure is called one value at a time (the run's relay serializes, or is fused
    /// behind a stage that does) and must send only synchronously, from inside itself, so it may
    /// keep per-subscription state without a lock (`StageState`). Errors and completion pass
    /// through; disposing the result disposes the upstream subscription.
    @inlinable
    func fuse<U>(_ makeStage: @escaping (StageOutput<U>) -> (Value) -> Void) -> Signal<U> {
        if let run = (self as? Signal<Value>)?.stageRun, run.length < StageRun<U>.maxLength {
            // Extend the run: the new stage goes after its last one.
            let attach = run.attach
            return Signal(stageRun: StageRun(length: run.length &+ 1) { next, end in
                attach(makeStage(StageOutput(next: next, subscription: end.subscription)), end)
            })
        }
        // A new run over `self`, headed by a relay subscribed as `lift` subscribes its relay.
        return Signal(stageRun: StageRun(length: 1) { next, end in
            let relay = Subscriber<Value>(
                relayDepth: end.relayDepth, levels: end.levels,
                next: makeStage(StageOutput(next: next, subscription: end.subscription)),
                error: end.error, completed: end.completed)
            subscribe(relay: relay, for: end.subscription)
        })
    }
}
