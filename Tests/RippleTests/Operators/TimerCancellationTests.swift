import Testing
@testable import Ripple
import RippleTestSupport
import RippleTesting

/// A value whose lifetime a test watches through a weak reference.
final class Payload: @unchecked Sendable {  // immutable
    let id: Int
    init(_ id: Int) { self.id = id }
}

/// The operators that schedule work on a scheduler, each built over a subject of payloads.
enum SchedulingOperator: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case delay, debounce, throttle, bufferTimeSpan, timeout, sample, interval, timer, deliverOn, subscribeOn
    case throttleFirst, timeoutSwitching, bufferTimeCount, takeFor, skipFor, sampleDefault

    var testDescription: String { rawValue }

    func make(_ source: Subject<Payload>, _ clock: TestScheduler) -> Signal<Any> {
        let interval = Duration.milliseconds(30)
        switch self {
        case .delay: return source.delay(interval, on: clock).map { $0 }
        case .debounce: return source.debounce(interval, on: clock).map { $0 }
        case .throttle: return source.throttle(interval, on: clock).map { $0 }
        case .bufferTimeSpan: return source.buffer(timeSpan: interval, on: clock).map { $0 }
        case .timeout: return source.timeout(interval, on: clock).map { $0 }
        case .sample: return source.sample(Signal<Int>.interval(interval, on: clock)).map { $0 }
        case .interval: return source.merge(Signal<Int>.interval(interval, on: clock).map { Payload($0) }).map { $0 }
        case .timer: return source.merge(Signal<Int>.timer(interval, on: clock).map { Payload($0) }).map { $0 }
        case .deliverOn: return source.deliver(on: clock).map { $0 }
        case .subscribeOn: return source.subscribe(on: clock).map { $0 }
        case .throttleFirst: return source.throttle(interval, latest: false, on: clock).map { $0 }
        case .timeoutSwitching: return source.timeout(interval, on: clock, switchingTo: Signal<Payload>.never).map { $0 }
        case .bufferTimeCount: return source.buffer(timeSpan: interval, count: 5, on: clock).map { $0 }
        case .takeFor: return source.take(for: interval, on: clock).map { $0 }
        case .skipFor: return source.skip(for: interval, on: clock).map { $0 }
        case .sampleDefault: return source.sample(Signal<Int>.interval(interval, on: clock), default: Payload(0)).map { $0 }
        }
    }
}

@Suite(.leakChecked, .offThePool) struct TimerCancellationTests {
    /// An operator that drops the disposable of a timer it scheduled would let a disposed
    /// subscription keep its driver, its downstream subscriber and the delayed values until
    /// every timer fired — forever on a `TestScheduler` that is not advanced.
    @Test(arguments: SchedulingOperator.allCases)
    func disposingCancelsEveryScheduledActionAndFreesTheSubscriber(_ op: SchedulingOperator) {
        let clock = TestScheduler()
        let source = Subject<Payload>()
        var recorder: Recorder<Any>? = Recorder()
        weak let weakRecorder = recorder
        weak var weakPayload1: Payload?, weakPayload2: Payload?, weakPayload3: Payload?
        do {
            let subscription = op.make(source, clock).subscribe(recorder.unsafelyUnwrapped)
            recorder = nil
            if op != .subscribeOn { clock.advance(by: .milliseconds(5)) }  // else: dispose before it subscribes
            let payloads = [Payload(1), Payload(2), Payload(3)]
            (weakPayload1, weakPayload2, weakPayload3) = (payloads[0], payloads[1], payloads[2])
            source.sendNext(payloads[0])
            if op != .subscribeOn { clock.advance(by: .milliseconds(5)) }
            source.sendNext(payloads[1])
            source.sendNext(payloads[2])
            #expect(clock.livePendingCount > 0, "the test needs work scheduled when it disposes")
            subscription.dispose()
        }
        #expect(clock.livePendingCount == 0, "\(op): work left scheduled after dispose")
        #expect(weakRecorder == nil, "\(op): the disposed subscription's subscriber is still alive")
        #expect(weakPayload1 == nil && weakPayload2 == nil && weakPayload3 == nil,
                "\(op): a value of the disposed subscription is still alive")
        #expect(source.storage.subscriberCount == 0)
        clock.run()
    }

    /// Values sent on two threads while a third disposes: every timer, including one scheduled
    /// while the dispose ran, is cancelled, so the subscriber is freed long before the delay ends.
    @Test func delayDisposedWhileValuesArriveOnOtherThreadsFreesItsSubscriberAtOnce() {
        for _ in 0..<Workload.size(50) {
            let source = Subject<Int>()
            let subscription = SerialDisposable()
            weak var weakSubscriber: Subscriber<Int>?
            do {
                let subscriber = Subscriber<Int>(next: { _ in Issue.record("a value arrived before the delay ended") })
                weakSubscriber = subscriber
                subscription.disposable = source.delay(.seconds(600), on: BackgroundScheduler()).subscribe(subscriber)
            }
            runConcurrently(threads: 3) { index in
                if index == 2 {
                    subscription.dispose()
                } else {
                    for value in 0..<200 { source.sendNext(value) }
                }
            }
            #expect(waitUntil { weakSubscriber == nil }, "a cancelled timer still holds the subscription")
        }
    }

    @Test func livePendingCountLeavesOutCancelledActions() {
        let clock = TestScheduler()
        let cancelled = clock.schedule(after: .seconds(1)) {}
        clock.schedule(after: .seconds(2)) {}
        cancelled.dispose()
        #expect(clock.pendingCount == 2)
        #expect(clock.livePendingCount == 1)
        clock.run()
        #expect(clock.pendingCount == 0 && clock.livePendingCount == 0)
    }

    @Test func aDelayedValueStillArrivesWhenOnlyAnotherSubscriptionIsDisposed() {
        let clock = TestScheduler()
        let source = Subject<Int>()
        let delayed = source.delay(.milliseconds(20), on: clock)
        let kept = clock.record(delayed)
        let dropped = delayed.subscribeNext { _ in Issue.record("a disposed subscription got a value") }
        source.sendNext(1)
        dropped.dispose()
        #expect(clock.livePendingCount == 1)
        clock.run()
        #expect(kept.events == [.next(20, 1)])
        kept.dispose()
    }
}
