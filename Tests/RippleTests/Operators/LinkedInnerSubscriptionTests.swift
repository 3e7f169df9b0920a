import Foundation
import Synchronization
import Testing
@testable import Ripple
import RippleTestSupport

/// Operators that subscribe to another signal inside their own subscribe closure — handing it
/// their downstream passthrough (`subscribe(on:)`, `take(during:)`, `startWith`, `onSubscribe`,
/// `onDispose`, `catch`'s replacement, `then`'s second signal) or closures (`take(until:)`,
/// `concatMap`, `flatMap`, `flatMapLatest`, `retry`, `zip`, `combineLatest`, `sample`, `withLatest`,
/// `skip(until:)`, `deliver(on:)` and the time operators) — must link that inner subscription into their own before the inner
/// signal's producer runs, as `lift` does: a synchronous source behind them (`Signal.from` over a
/// huge range) then stops within an element of the subscription ending, however it ends.
///
/// Each source counts the elements its `map` pulls; the subscription ends from inside that loop.
@Suite(.leakChecked, .offThePool) struct LinkedInnerSubscriptionTests {
    /// Far more than any test lets through: a source that runs on to its end pulls all of them.
    static let sourceSize = 1_000_000
    /// The element whose `map` call ends the subscription (dispose mode).
    static let endAt = 100

    @Test(arguments: Shape.all)
    func disposingFromInsideTheLoopStopsASynchronousSourceBehind(_ shape: Shape) {
        let probe = Probe()
        let fixture = Fixture()
        let signal = shape.build(probe.source(endingAt: Self.endAt), fixture)
        signal.subscribe(probe.subscriber(), into: probe.handle)
        #expect(probe.pulledCount <= Self.endAt + 2, "the source pulled \(probe.pulledCount) elements, ended at \(Self.endAt)")
        #expect(probe.lateValues.load(ordering: .relaxed) == 0, "values delivered after the dispose")
        #expect(probe.terminals.load(ordering: .relaxed) == 0, "a terminal event after the dispose")
        withExtendedLifetime(fixture) {}
    }

    @Test(arguments: Shape.forwarding)
    func aDownstreamTakeStopsASynchronousSourceBehindAndCompletesOnce(_ shape: Shape) {
        let probe = Probe()
        let fixture = Fixture()
        let values = Box<[Int]>([])
        let terminals = Box<[String]>([])
        shape.build(probe.source(endingAt: nil), fixture).take(5).subscribe(
            next: { value in values.mutate { $0.append(value) } },
            error: { error in terminals.mutate { $0.append("error \(error)") } },
            completed: { terminals.mutate { $0.append("completed") } })
        #expect(values.value.count == 5)
        #expect(terminals.value == ["completed"])
        #expect(probe.pulledCount <= 5 + 2, "the source pulled \(probe.pulledCount) elements after take(5) completed")
        withExtendedLifetime(fixture) {}
    }

    @Test func endingTheLifetimeFromACallbackStopsTakeDuringsSourceAndCompletesOnce() {
        let probe = Probe()
        let (lifetime, token) = Lifetime.make()
        let events = Box<[Event<Int>]>([])
        probe.source(endingAt: nil).take(during: lifetime).subscribe(
            next: { value in
                events.mutate { $0.append(.next(value)) }
                if value == 9 { token.end() }
            },
            error: { error in events.mutate { $0.append(.error(error)) } },
            completed: { events.mutate { $0.append(.completed) } })
        #expect(events.value == (0...9).map { .next($0) } + [.completed])
        #expect(probe.pulledCount <= 10 + 1, "the source pulled \(probe.pulledCount) elements after the lifetime ended")
    }

    @Test func aTriggerFiringFromInsideTheSourcesLoopStopsTakeUntilsSourceAndCompletesOnce() {
        let probe = Probe()
        let trigger = Subject<Void>()
        let events = Box<[Event<Int>]>([])
        probe.source(endingAt: nil).take(until: trigger).subscribe(
            next: { value in
                events.mutate { $0.append(.next(value)) }
                if value == 9 { trigger.sendNext(()) }
            },
            error: { error in events.mutate { $0.append(.error(error)) } },
            completed: { events.mutate { $0.append(.completed) } })
        #expect(events.value == (0...9).map { .next($0) } + [.completed])
        #expect(probe.pulledCount <= 10 + 1, "the source pulled \(probe.pulledCount) elements after the trigger fired")
    }

    @Test func aSynchronousTriggerStopsAtItsFirstValueWhenTakeUntilCompletes() {
        let probe = Probe()
        let events = Box<[Event<Int>]>([])
        Signal<Int>.never.take(until: probe.source(endingAt: nil)).subscribe(
            next: { value in events.mutate { $0.append(.next(value)) } },
            error: { error in events.mutate { $0.append(.error(error)) } },
            completed: { events.mutate { $0.append(.completed) } })
        #expect(events.value == [.completed])
        #expect(probe.pulledCount <= 2, "the trigger pulled \(probe.pulledCount) elements after the result completed")
    }

    @Test func disconnectingAMulticastConnectionFromACallbackStopsItsSynchronousSource() {
        let probe = Probe()
        let connection = probe.source(endingAt: nil).multicast(Subject<Int>())
        let values = Box<[Int]>([])
        let subscription = connection.signal.subscribeNext { value in
            values.mutate { $0.append(value) }
            if value == 9 { connection.connect().dispose() }  // connected: the same disposable
        }
        connection.connect()
        #expect(values.value == Array(0...9))
        #expect(probe.pulledCount <= 10 + 1, "the source pulled \(probe.pulledCount) elements after the disconnect")
        subscription.dispose()
    }

    /// The links are per operator, into a slot it reuses (`concat`, `retry`, `flatMapLatest`) or
    /// a child it removes when the inner subscription completes (`flatMap`): 40,000 inner
    /// subscriptions one after another leave neither disposed children in the subscription's
    /// compound nor live subscribers behind them (sampled every 10,000, where a leak of one per
    /// inner subscription would show thousands).
    @Test(arguments: Repetition.all)
    func manySequentialInnerSubscriptionsKeepTheSubscriptionSmall(_ repetition: Repetition) {
        let handle = CompoundDisposable()
        let baseline = liveSubscriptionsInThisTest
        let received = Box(0)
        let samples = Box<[(children: Int, live: Int)]>([])
        let completed = Box(0)
        repetition.signal.subscribe(
            Subscriber(
                next: { _ in
                    let count = received.mutate { count -> Int in count += 1; return count }
                    if count % (Repetition.count / 4) == 0 {
                        samples.mutate { $0.append((handle.childCount, liveSubscriptionsInThisTest - baseline)) }
                    }
                },
                error: { _ in completed.mutate { $0 += 1 } },
                completed: { completed.mutate { $0 += 1 } }),
            into: handle)
        #expect(received.value >= Repetition.count)
        #expect(completed.value == 1)
        #expect(samples.value.count >= 4)
        for sample in samples.value {
            #expect(sample.children <= 4, "the subscription's compound holds \(sample.children) children")
            #expect(sample.live <= 8, "\(sample.live) subscriptions alive in the middle of the run")
        }
    }
}

/// An operator (or a few) placed over the counting source, named for the test's arguments.
struct Shape: Sendable, CustomTestStringConvertible {
    let name: String
    /// Whether the signal forwards each source value as it comes, so a downstream `take` sees them.
    let forwards: Bool
    let build: @Sendable (Signal<Int>, Fixture) -> Signal<Int>

    var testDescription: String { name }

    init(_ name: String, forwards: Bool = true, _ build: @escaping @Sendable (Signal<Int>, Fixture) -> Signal<Int>) {
        self.name = name
        self.forwards = forwards
        self.build = build
    }

    static let all: [Shape] = [
        Shape("subscribe(on: immediate)") { source, _ in source.subscribe(on: ImmediateScheduler.shared) },
        Shape("deliver(on: immediate)") { source, _ in source.deliver(on: ImmediateScheduler.shared) },
        Shape("take(during:)") { source, fixture in source.take(during: fixture.lifetime) },
        Shape("startWith") { source, _ in source.startWith(-1) },
        Shape("onSubscribe") { source, _ in source.onSubscribe {} },
        Shape("onDispose") { source, _ in source.onDispose {} },
        Shape("catch, the source") { source, _ in source.catch { _ in Signal<Int>.empty } },
        Shape("catch, the replacement") { source, _ in Signal<Int>.error(TestError()).catch { _ in source } },
        Shape("retry") { source, _ in source.retry(1) },
        Shape("timeout") { source, fixture in source.timeout(.seconds(1_000), on: fixture.scheduler) },
        Shape("take(until:), the source") { source, _ in source.take(until: Signal<Int>.never) },
        Shape("then, the first", forwards: false) { source, _ in source.then(Signal.just(0)) },
        Shape("then, the second") { source, _ in Signal<Int>.empty.then(source) },
        Shape("concat, the first") { source, _ in source.concat(Signal<Int>.never) },
        Shape("concatMap, the outer") { source, _ in source.concatMap { Signal.just($0) } },
        Shape("concatMap, an inner") { source, _ in Signal.just(0).concatMap { _ in source } },
        Shape("flatMap, the outer") { source, _ in source.flatMap { Signal.just($0) } },
        Shape("flatMap, an inner") { source, _ in Signal.just(0).flatMap { _ in source } },
        Shape("merge") { source, _ in source.merge(Signal<Int>.never) },
        Shape("flatMapLatest, the outer") { source, _ in source.flatMapLatest { Signal.just($0) } },
        Shape("flatMapLatest, an inner") { source, _ in Signal.just(0).flatMapLatest { _ in source } },
        Shape("zip") { source, _ in Signal<Int>.zip([source]).map { $0[0] } },
        Shape("combineLatest") { source, _ in Signal<Int>.combineLatest([Signal.just(0), source]).map { $0[1] } },
        Shape("sample, the source", forwards: false) { source, _ in source.sample(Signal<Int>.never) },
        Shape("sample, the sampler", forwards: false) { source, _ in Signal<Int>.never.sample(source) },
        Shape("delay", forwards: false) { source, fixture in source.delay(.seconds(1), on: fixture.scheduler) },
        Shape("throttle", forwards: false) { source, fixture in source.throttle(.seconds(1), on: fixture.scheduler) },
        Shape("debounce", forwards: false) { source, fixture in source.debounce(.seconds(1), on: fixture.scheduler) },
        Shape("buffer(timeSpan:)", forwards: false) { source, fixture in
            source.buffer(timeSpan: .seconds(1), on: fixture.scheduler).map { $0.first ?? 0 }
        },
        Shape("withLatest, the source") { source, _ in source.withLatest(from: Signal.just(0)).map { $0.0 } },
        Shape("withLatest, the other", forwards: false) { source, _ in Signal<Int>.never.withLatest(from: source).map { $0.0 } },
        Shape("skip(until:), the source") { source, _ in source.skip(until: Signal.just(0)) },
        Shape("take(for:)") { source, fixture in source.take(for: .seconds(1_000), on: fixture.scheduler) },
        Shape("skip(for:)", forwards: false) { source, fixture in source.skip(for: .seconds(1), on: fixture.scheduler) },
        Shape("timeout(switchingTo:), the source") { source, fixture in
            source.timeout(.seconds(1_000), on: fixture.scheduler, switchingTo: Signal<Int>.never)
        },
        // An immediate timer switches during the subscription, to the counting source.
        Shape("timeout(switchingTo:), the fallback") { source, _ in
            Signal<Int>.never.timeout(.zero, on: ImmediateScheduler.shared, switchingTo: source)
        },
        Shape("buffer(timeSpan:count:)") { source, fixture in
            source.buffer(timeSpan: .seconds(1), count: 1, on: fixture.scheduler).map { $0.first ?? 0 }
        },
        Shape("throttle(latest: false)", forwards: false) { source, fixture in
            source.throttle(.seconds(1), latest: false, on: fixture.scheduler)
        },
        Shape("sample(default:), the source", forwards: false) { source, _ in source.sample(Signal<Int>.never, default: -1) },
        Shape("sample(default:), the sampler") { source, _ in Signal<Int>.never.sample(source, default: -1) },
        Shape("flatMap(maxConcurrent:), the outer") { source, _ in source.flatMap(maxConcurrent: 2) { Signal.just($0) } },
        Shape("flatMap(maxConcurrent:), an inner") { source, _ in Signal.just(0).flatMap(maxConcurrent: 2) { _ in source } },
        Shape("merge(maxConcurrent:)") { source, _ in Signal.just(source).merge(maxConcurrent: 1) },
        Shape("flatMapFirst, the outer") { source, _ in source.flatMapFirst { Signal.just($0) } },
        Shape("flatMapFirst, an inner") { source, _ in Signal.just(0).flatMapFirst { _ in source } },
        Shape("deferred") { source, _ in Signal.deferred { source } },
        Shape("retry()") { source, _ in source.retry() },
        Shape("retry(upTo:backoff:on:)") { source, fixture in source.retry(upTo: 1, backoff: .immediate, on: fixture.scheduler) },
        Shape("retry(when:)") { source, _ in source.retry(when: { errors in errors.map { _ in () } }) },
    ]

    static var forwarding: [Shape] { all.filter(\.forwards) }
}

/// What a shape may use: a lifetime that lasts the test, a clock that never moves.
final class Fixture: Sendable {
    let lifetime: Lifetime
    let token: Lifetime.Token
    let scheduler = TestScheduler()

    init() {
        (lifetime, token) = Lifetime.make()
    }
}

/// A synchronous source of `LinkedInnerSubscriptionTests.sourceSize` values behind a `map` that
/// counts its calls, and the handle of the subscription it feeds (made before subscribing).
final class Probe: Sendable {
    let pulled = Atomic<Int>(0)
    let ended = Atomic<Bool>(false)
    let lateValues = Atomic<Int>(0)
    let terminals = Atomic<Int>(0)
    let handle = CompoundDisposable()

    var pulledCount: Int { pulled.load(ordering: .relaxed) }

    /// The counting source; its `endAt`-th element disposes `handle` from inside the loop.
    func source(endingAt endAt: Int?) -> Signal<Int> {
        Signal.from(0..<LinkedInnerSubscriptionTests.sourceSize).map { [self] value in
            let count = pulled.add(1, ordering: .relaxed).newValue
            if count == endAt {
                ended.store(true, ordering: .relaxed)
                handle.dispose()
            }
            return value
        }
    }

    /// A subscriber counting what arrives after the end.
    func subscriber() -> Subscriber<Int> {
        Subscriber(
            next: { [self] _ in if ended.load(ordering: .relaxed) { lateValues.add(1, ordering: .relaxed) } },
            error: { [self] _ in terminals.add(1, ordering: .relaxed) },
            completed: { [self] in terminals.add(1, ordering: .relaxed) })
    }
}

/// An operator that subscribes 40,000 inner signals one after another.
struct Repetition: Sendable, CustomTestStringConvertible {
    let name: String
    let signal: Signal<Int>
    var testDescription: String { name }

    static let count = 40_000

    static let all: [Repetition] = [
        Repetition(name: "concat", signal: Signal<Int>.concat(Array(repeating: Signal.just(1), count: count))),
        Repetition(name: "concatMap", signal: Signal.from(0..<count).concatMap { Signal.just($0) }),
        Repetition(name: "flatMap", signal: Signal.from(0..<count).flatMap { Signal.just($0) }),
        Repetition(name: "flatMapLatest", signal: Signal.from(0..<count).flatMapLatest { Signal.just($0) }),
        Repetition(name: "retry", signal: Signal<Int> { subscriber in
            subscriber.sendNext(1)
            subscriber.sendError(TestError())
            return nil
        }.retry(count)),
        Repetition(name: "flatMap(maxConcurrent:)", signal: Signal.from(0..<count).flatMap(maxConcurrent: 1) { Signal.just($0) }),
        Repetition(name: "flatMapFirst", signal: Signal.from(0..<count).flatMapFirst { Signal.just($0) }),
        Repetition(name: "retry()", signal: Signal<Int> { subscriber in
            subscriber.sendNext(1)
            subscriber.sendError(TestError())
            return nil
        }.retry().take(count)),
        Repetition(name: "catch, then concat", signal: Signal<Int>.error(TestError()).catch { _ in
            Signal<Int>.concat(Array(repeating: Signal.just(1), count: count))
        }),
    ]
}
