import Foundation
import Ripple

/// A subscriber that records every event with the virtual time it arrived at (RxTest's
/// `TestableObserver`).
///
/// Its ``events`` print as a marble line, so `#expect(recorder.events == expected)` shows
/// the expected and the actual line when it fails. It may receive events on any thread.
///
///     let clock = TestScheduler()
///     let recorder = clock.record(clock.cold("-a-b-|").delay(.milliseconds(20), on: clock))
///     clock.run()
///     #expect(recorder.events == "---a-b-|")
public final class TestSubscriber<Value>: SubscriberProtocol {
    private let scheduler: TestScheduler
    private let lock = NSLock()
    /// Guarded by `lock`.
    private var recorded: [Recorded<Value>] = []
    /// Guarded by `lock`.
    private var subscription: (any Disposable)?

    /// A subscriber that stamps each event with `scheduler`'s `now`.
    ///
    ///     let recorder = TestSubscriber<Int>(scheduler: clock)
    ///     signal.subscribe(recorder)
    ///
    /// - Parameter scheduler: The clock whose time each event is recorded at.
    public init(scheduler: TestScheduler) {
        self.scheduler = scheduler
    }

    /// What arrived so far, with times; prints as a marble line.
    ///
    ///     recorder.events == [.next(210, 1), .completed(300)]
    public var events: RecordedEvents<Value> {
        RecordedEvents(lock.withLock { recorded })
    }

    /// Just the values that arrived so far.
    ///
    ///     recorder.values == [1, 2]
    public var values: [Value] { events.values }

    /// Records a value at the scheduler's current time.
    public func sendNext(_ value: Value) { record(.next(value)) }
    /// Records an error at the scheduler's current time.
    public func sendError(_ error: any Error) { record(.error(error)) }
    /// Records completion at the scheduler's current time.
    public func sendCompleted() { record(.completed) }

    private func record(_ event: Event<Value>) {
        let entry = Recorded(time: scheduler.now, event: event)
        lock.withLock { recorded.append(entry) }
    }

    /// Keeps the subscription `TestScheduler.record(_:)` made, for ``dispose()``.
    func hold(_ disposable: any Disposable) {
        lock.withLock { subscription = disposable }
    }

    /// Ends the subscription that `TestScheduler.record(_:)` or
    /// `start(created:subscribed:disposed:_:)` made; nothing is recorded after it.
    ///
    ///     let recorder = clock.record(clock.hot("-a-b-c"))
    ///     clock.advance(to: .milliseconds(30))
    ///     recorder.dispose()
    ///     clock.run()
    ///     #expect(recorder.events == "-a-b")
    public func dispose() {
        let disposable = lock.withLock { subscription }
        disposable?.dispose()  // outside the lock: disposing runs the signal's disposal code
    }
}

extension TestSubscriber: @unchecked Sendable where Value: Sendable {}  // every field is under `lock` or immutable; Sendable only when its values are

extension TestScheduler {
    /// Subscribes a new ``TestSubscriber`` to `signal` now, and returns it.
    ///
    ///     let clock = TestScheduler()
    ///     let recorder = clock.record(clock.cold("-a-|"))
    ///     clock.run()
    ///     print(recorder.events)   // -a-|
    ///
    /// - Parameter signal: The signal to record.
    /// - Returns: The recorder; its ``TestSubscriber/dispose()`` ends the subscription.
    public func record<S: SignalProtocol>(_ signal: S) -> TestSubscriber<S.Value> {
        let subscriber = TestSubscriber<S.Value>(scheduler: self)
        subscriber.hold(signal.subscribe(subscriber))
        return subscriber
    }

    /// Creates, subscribes and disposes a signal at fixed virtual times, recording what it sends
    /// in between (RxTest's `start`, with its defaults: 100, 200 and 1000 ms).
    ///
    /// As in RxTest, the three steps are scheduled as actions when `start` is called, then the
    /// clock runs to `disposed`: at a step's time, what was scheduled before `start` (a hot
    /// signal's events) runs before the step, and what the signal under test schedules later (a
    /// cold signal's events, a timer's ticks) runs after it — so an event due exactly at
    /// `disposed` is not recorded, and a hot signal made inside `create` sees events at
    /// `subscribed`. It returns with the clock at `disposed`, so a periodic timer the signal
    /// starts cannot keep it running. The steps run as this scheduler (`Schedulers.current`),
    /// like its actions.
    ///
    ///     let clock = TestScheduler()
    ///     let source = clock.hot(.next(150, 1), .next(210, 2), .next(1100, 3), .completed(1200))
    ///     let recorder = clock.start { source.map { $0 * 10 } }
    ///     #expect(recorder.events == [.next(210, 20)])            // 150 is before, 1100 after
    ///     #expect(source.subscriptions == [RecordedSubscription(200, 1000)])
    ///
    /// - Parameters:
    ///   - created: When `create` runs; 100 ms unless given.
    ///   - subscribed: When the recorder subscribes; 200 ms unless given.
    ///   - disposed: When the subscription is disposed; 1000 ms unless given.
    ///   - create: Makes the signal under test.
    /// - Returns: The recorder, holding the events received between `subscribed` and `disposed`.
    public func start<S: SignalProtocol>(
        created: Duration = .milliseconds(100), subscribed: Duration = .milliseconds(200),
        disposed: Duration = .milliseconds(1000), _ create: () -> S
    ) -> TestSubscriber<S.Value> {
        precondition(created <= subscribed && subscribed <= disposed,
                     "start(created:subscribed:disposed:): the times must not decrease")
        precondition(now <= created, "start(created:subscribed:disposed:): the clock is already at \(now), past created (\(created))")
        let subscriber = TestSubscriber<S.Value>(scheduler: self)
        return withoutActuallyEscaping(create) { create in
            // The steps run on this thread, inside `advance(to:)` below, before `start` returns.
            var made: S?
            let steps = Unchecked(value: (
                create: { made = create() },
                subscribe: { if let made { subscriber.hold(made.subscribe(subscriber)) } },
                dispose: { subscriber.dispose() }))
            schedule(at: created) { steps.value.create() }
            schedule(at: subscribed) { steps.value.subscribe() }
            schedule(at: disposed) { steps.value.dispose() }
            advance(to: disposed)
            return subscriber
        }
    }
}
