import Testing
@testable import Ripple
import RippleTestSupport

/// One operator applied to an `Int` upstream, its output erased to `String`, for the
/// rules every operator shares: errors propagate, disposal disposes upstream.
struct OperatorCase: CustomTestStringConvertible, Sendable {
    let name: String
    let apply: @Sendable (Signal<Int>, TestScheduler) -> Signal<String>
    var testDescription: String { name }

    init(_ name: String, _ apply: @escaping @Sendable (Signal<Int>, TestScheduler) -> Signal<String>) {
        self.name = name
        self.apply = apply
    }

    /// Every operator whose upstream error reaches its subscriber unchanged.
    static let errorForwarding: [OperatorCase] = [
        .init("map") { s, clock in s.map { "\($0)" } },
        .init("filter") { s, clock in s.filter { $0 > 0 }.map { "\($0)" } },
        .init("compactMap") { s, clock in s.compactMap { "\($0)" } },
        .init("scan") { s, clock in s.scan(0, +).map { "\($0)" } },
        .init("reduce") { s, clock in s.reduce(0, +).map { "\($0)" } },
        .init("collect") { s, clock in s.collect().map { "\($0)" } },
        .init("ignoreValues") { s, clock in s.ignoreValues().map { "\($0)" } },
        .init("distinctUntilChanged") { s, clock in s.distinctUntilChanged().map { "\($0)" } },
        .init("startWith") { s, clock in s.startWith(0).map { "\($0)" } },
        .init("take") { s, clock in s.take(5).map { "\($0)" } },
        .init("skip") { s, clock in s.skip(1).map { "\($0)" } },
        .init("takeWhile") { s, clock in s.take(while: { $0 < 5 }).map { "\($0)" } },
        .init("skipWhile") { s, clock in s.skip(while: { $0 < 5 }).map { "\($0)" } },
        .init("takeUntil") { s, clock in s.take(until: Signal<Int>.never).map { "\($0)" } },
        .init("first") { s, clock in s.first().map { "\($0)" } },
        .init("last") { s, clock in s.last().map { "\($0)" } },
        .init("merge") { s, clock in s.merge(Signal<Int>.never).map { "\($0)" } },
        .init("concat") { s, clock in s.concat(Signal<Int>.just(1)).map { "\($0)" } },
        .init("zip") { s, clock in s.zip(Signal<Int>.never).map { "\($0)" } },
        .init("combineLatest") { s, clock in s.combineLatest(Signal<Int>.never).map { "\($0)" } },
        .init("flatMap") { s, clock in s.flatMap { Signal.just($0) }.map { "\($0)" } },
        .init("concatMap") { s, clock in s.concatMap { Signal.just($0) }.map { "\($0)" } },
        .init("flatMapLatest") { s, clock in s.flatMapLatest { Signal.just($0) }.map { "\($0)" } },
        .init("then") { s, clock in s.then(Signal<Int>.just(1)).map { "\($0)" } },
        .init("flatMapMaxConcurrent") { s, clock in s.flatMap(maxConcurrent: 2) { Signal.just($0) }.map { "\($0)" } },
        .init("mergeMaxConcurrent") { s, clock in s.map { Signal.just($0) }.merge(maxConcurrent: 1).map { "\($0)" } },
        .init("flatMapFirst") { s, clock in s.flatMapFirst { Signal.just($0) }.map { "\($0)" } },
        .init("deferred") { s, clock in Signal.deferred { s }.map { "\($0)" } },
        .init("retry(0)") { s, clock in s.retry(0).map { "\($0)" } },
        .init("retryBackoff(0)") { s, clock in
            s.retry(upTo: 0, backoff: .constant(.seconds(1)), on: clock).map { "\($0)" }
        },
        .init("retryWhen") { s, clock in
            s.retry(when: { errors in errors.flatMap { Signal<Int>.error($0) } }).map { "\($0)" }
        },
        .init("timeout") { s, clock in s.timeout(.seconds(1), on: clock).map { "\($0)" } },
        .init("delay") { s, clock in s.delay(.seconds(1), on: clock).map { "\($0)" } },
        .init("throttle") { s, clock in s.throttle(.seconds(1), on: clock).map { "\($0)" } },
        .init("debounce") { s, clock in s.debounce(.seconds(1), on: clock).map { "\($0)" } },
        .init("bufferCount") { s, clock in s.buffer(count: 2).map { "\($0)" } },
        .init("bufferTime") { s, clock in s.buffer(timeSpan: .seconds(1), on: clock).map { "\($0)" } },
        .init("sample") { s, clock in s.sample(Signal<Int>.never).map { "\($0)" } },
        .init("onNext") { s, clock in s.onNext { _ in }.map { "\($0)" } },
        .init("onError") { s, clock in s.onError { _ in }.map { "\($0)" } },
        .init("onCompleted") { s, clock in s.onCompleted {}.map { "\($0)" } },
        .init("onSubscribe") { s, clock in s.onSubscribe {}.map { "\($0)" } },
        .init("onDispose") { s, clock in s.onDispose {}.map { "\($0)" } },
        .init("subscribeOn") { s, clock in s.subscribe(on: ImmediateScheduler.shared).map { "\($0)" } },
        .init("deliverOn") { s, clock in s.deliver(on: ImmediateScheduler.shared).map { "\($0)" } },
        .init("publish.autoconnect") { s, clock in s.publish().autoconnect().map { "\($0)" } },
        .init("share") { s, clock in s.share().map { "\($0)" } },
        .init("shareReplay") { s, clock in s.share(replay: 2).map { "\($0)" } },
        .init("multicastMakeSubject.autoconnect") { s, clock in
            s.multicast(makeSubject: { ReplaySubject<Int>(capacity: 1) }).autoconnect().map { "\($0)" }
        },
        .init("replayLazily") { s, clock in s.replayLazily().map { "\($0)" } },
        .init("takeDuring") { s, clock in s.take(during: keptAlive.lifetime).map { "\($0)" } },
        .init("log") { s, clock in s.log("t", output: { _ in }).map { "\($0)" } },
        // Combining, slicing and time: withLatest(from:) … sample(_:default:).
        .init("withLatest") { s, clock in s.withLatest(from: Signal.just(1)).map { "\($0)" } },
        .init("combinePrevious") { s, clock in s.combinePrevious(0).map { "\($0)" } },
        .init("combinePrevious()") { s, clock in s.combinePrevious().map { "\($0)" } },
        .init("zip4") { s, clock in s.zip(Signal<Int>.never, Signal<Int>.never, Signal<Int>.never).map { "\($0)" } },
        .init("zip5") { s, clock in s.zip(Signal<Int>.never, Signal<Int>.never, Signal<Int>.never, Signal<Int>.never).map { "\($0)" } },
        .init("combineLatest4") { s, clock in s.combineLatest(Signal<Int>.never, Signal<Int>.never, Signal<Int>.never).map { "\($0)" } },
        .init("combineLatest5") { s, clock in
            s.combineLatest(Signal<Int>.never, Signal<Int>.never, Signal<Int>.never, Signal<Int>.never).map { "\($0)" }
        },
        .init("skipUntil") { s, clock in s.skip(until: Signal<Int>.never).map { "\($0)" } },
        .init("takeLast") { s, clock in s.take(last: 2).map { "\($0)" } },
        .init("takeWhileInclusive") { s, clock in s.take(while: { $0 < 5 }, inclusive: true).map { "\($0)" } },
        .init("takeFor") { s, clock in s.take(for: .seconds(1), on: clock).map { "\($0)" } },
        .init("skipFor") { s, clock in s.skip(for: .seconds(1), on: clock).map { "\($0)" } },
        .init("elementAt") { s, clock in s.element(at: 1).map { "\($0)" } },
        .init("scanInto") { s, clock in s.scan(into: 0) { $0 += $1 }.map { "\($0)" } },
        .init("throttleFirst") { s, clock in s.throttle(.seconds(1), latest: false, on: clock).map { "\($0)" } },
        .init("timeoutSwitching") { s, clock in s.timeout(.seconds(1), on: clock, switchingTo: Signal<Int>.never).map { "\($0)" } },
        .init("bufferTimeCount") { s, clock in s.buffer(timeSpan: .seconds(1), count: 2, on: clock).map { "\($0)" } },
        .init("sampleDefault") { s, clock in s.sample(Signal<Int>.never, default: 0).map { "\($0)" } },
    ]

    /// Every operator whose result's disposal disposes its upstream subscription.
    /// A lifetime that never ends during the tests.
    static let keptAlive = Lifetime.make()

    /// Every operator whose result's disposal disposes its upstream subscription
    /// (`replayLazily`, `replay` and `replayLast` keep their connection by design).
    static let upstreamDisposing: [OperatorCase] = errorForwarding.filter { $0.name != "replayLazily" } + [
        .init("materialize") { s, clock in s.materialize().map { "\($0)" } },
        .init("catch") { s, clock in s.catch { _ in Signal<Int>.empty }.map { "\($0)" } },
        .init("catchTo") { s, clock in s.catchTo(Signal<Int>.empty).map { "\($0)" } },
        .init("retry(3)") { s, clock in s.retry(3).map { "\($0)" } },
        .init("retry()") { s, clock in s.retry().map { "\($0)" } },
        .init("retryBackoff(3)") { s, clock in
            s.retry(upTo: 3, backoff: .exponential(initial: .seconds(1), multiplier: 2, maximum: .seconds(4)), on: clock)
                .map { "\($0)" }
        },
        .init("retryWhenDelayed") { s, clock in
            s.retry(when: { errors in errors.delay(.seconds(1), on: clock) }).map { "\($0)" }
        },
        .init("pipe") { s, clock in (s |> map { $0 + 1 } |> filter { $0 > 0 }).map { "\($0)" } },
    ]
}

@Suite(.leakChecked) struct OperatorContractTests {
    @Test(arguments: OperatorCase.errorForwarding)
    func anUpstreamErrorReachesTheSubscriber(op: OperatorCase) {
        let r = Recorder<String>()
        let clock = TestScheduler()
        op.apply(Signal<Int>.error(TestError()), clock).subscribe(r)
        clock.advance(by: .milliseconds(1))
        #expect(r.events.last == .error(TestError()))
        #expect(r.events.filter(\.isTerminal).count == 1)
    }

    @Test(arguments: OperatorCase.upstreamDisposing)
    func disposingTheResultDisposesTheUpstreamSubscriptionOnce(op: OperatorCase) {
        let cleanups = Box(0)
        let subscriptions = Box(0)
        let upstream = Signal<Int> { subscriber in  // silent, but holds its subscriber: it could still send
            subscriptions.mutate { $0 += 1 }
            return ActionDisposable {
                withExtendedLifetime(subscriber) {}
                cleanups.mutate { $0 += 1 }
            }
        }
        let clock = TestScheduler()
        let d = op.apply(upstream, clock).subscribe(Recorder<String>())
        clock.advance(by: .milliseconds(1))
        #expect(subscriptions.value == 1)
        #expect(cleanups.value == 0)
        d.dispose()
        d.dispose()
        #expect(cleanups.value == 1)
    }

    @Test(arguments: OperatorCase.upstreamDisposing)
    func nothingArrivesAfterTheResultIsDisposed(op: OperatorCase) {
        let upstream = Subject<Int>()
        let r = Recorder<String>()
        let clock = TestScheduler()
        let d = op.apply(upstream.asSignal(), clock).subscribe(r)
        d.dispose()
        upstream.sendNext(1)
        upstream.sendCompleted()
        clock.advance(by: .seconds(5))
        // Only startWith sends anything, and only its start value, before subscribing upstream.
        let before: [Event<String>] = op.name == "startWith" ? [.next("0")] : []
        #expect(r.events == before)
    }
}
