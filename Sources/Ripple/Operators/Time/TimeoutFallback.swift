extension SignalProtocol {
    /// Switches to `fallback` unless the signal ends within `interval` of subscribing, instead
    /// of failing (RxSwift's `timeout(_:other:scheduler:)`).
    ///
    ///     source:   -1-2-----3|
    ///     fallback:      -9|
    ///     result:   -1-2--9|       (50 ms)
    ///
    /// The interval is measured as `timeout(_:on:)` measures it: from subscribing to the
    /// source's terminal event (RAC's `timeout:onScheduler:`), not between values as RxSwift
    /// does. When it passes first, the source's subscription is disposed and `fallback` is
    /// subscribed, on `scheduler`; its events follow the source's values. When the source ends
    /// first, its completion or error is forwarded and the timer is cancelled; `fallback` is
    /// never subscribed.
    ///
    ///     fetch(id).timeout(.seconds(2), on: scheduler, switchingTo: cache.value(for: id))
    ///
    /// - Parameters:
    ///   - interval: How long the source may run before the switch.
    ///   - scheduler: The clock that times `interval`, and where `fallback` is subscribed.
    ///   - fallback: The signal that takes over when the time is up.
    /// - Returns: The source's events, then `fallback`'s if the time ran out first.
    public func timeout<Fallback: SignalProtocol>(
        _ interval: Duration, on scheduler: any Scheduler, switchingTo fallback: Fallback
    ) -> Signal<Value> where Value: Sendable, Fallback.Value == Value {
        Signal { downstream in
            let driver = TimeoutFallbackDriver(fallback: fallback.asSignal(), downstream: downstream)
            // The timer and the source's slot join this subscription, then the source takes its
            // slot before its producer runs (`subscribe(linking:)`): ending this subscription while
            // a synchronous source sends stops it at once. The fallback joins it the same way.
            downstream.disposable.add(driver.source)
            downstream.disposable.add(scheduler.schedule(after: interval) { driver.timedOut() })
            self.subscribe(
                linking: { driver.source.disposable = $0 },
                next: { driver.sourceSent(.next($0)) },
                error: { driver.sourceSent(.error($0)) },
                completed: { driver.sourceSent(.completed) })
            return nil
        }
    }
}

/// One `timeout(_:on:switchingTo:)` subscription: whether the source still runs, or the
/// fallback took over.
final class TimeoutFallbackDriver<Value: Sendable>: Sendable {

    /// Who sends now. Entered: `source` at subscription; `fallback` when the timer fires while
    /// the source runs; `ended` when the source ends first. `fallback` and `ended` are final.
    enum Phase: Sendable {
        case source, fallback, ended
    }

    private let fallback: Signal<Value>
    private let forwarder: SerialForwarder<Value>
    private let downstream: PassthroughSubscriber<Value>
    private let phase = Lock(Phase.source)
    /// The source's subscription, disposed when the fallback takes over.
    let source = SerialDisposable()

    init(fallback: Signal<Value>, downstream: PassthroughSubscriber<Value>) {
        self.fallback = fallback
        self.downstream = downstream
        forwarder = SerialForwarder(downstream)
    }

    /// An event of the source: forwarded only while the source still runs (a value racing the
    /// timer on another thread is dropped once the fallback took over).
    func sourceSent(_ event: Event<Value>) {
        let forward = phase.withLock { phase in
            guard phase == .source else { return false }
            if event.isTerminal { phase = .ended }
            forwarder.enqueue(event)
            return true
        }
        if forward { forwarder.drain() }
    }

    /// The timer fired: unless the source ended, it is disposed and the fallback subscribed.
    func timedOut() {
        let switches = phase.withLock { phase in
            guard phase == .source else { return false }
            phase = .fallback
            return true
        }
        guard switches else { return }
        source.dispose()
        fallback.subscribe(
            linkingInto: downstream.disposable,
            next: { [forwarder] in forwarder.send(.next($0)) },
            error: { [forwarder] in forwarder.send(.error($0)) },
            completed: { [forwarder] in forwarder.send(.completed) })
    }
}
