import Foundation
import Testing
@testable import Ripple
import RippleTestSupport

/// The operators the reference model covers, each over hot subjects `s[0]`, `s[1]`, `s[2]`.
enum ModelOperator: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case map, filter, compactMap, scan, take, skip, takeWhile, skipWhile, distinctUntilChanged, startWith
    case reduce, collect, first, last, ignoreValues, materialize
    case merge, concat, zip, combineLatest, flatMap, switchToLatest, concatMap
    case flatMapMaxConcurrent, flatMapFirst
    case then, `catch`, catchTo, retry, takeUntil, sample
    case retryBackoff
    case delay, debounce, throttle, bufferCount, bufferTimeSpan, timeout, deliverOn, subscribeOn
    case withLatest, combinePrevious, scanInto, skipUntil, takeLast, takeWhileInclusive, elementAt
    case takeFor, skipFor, throttleFirst, timeoutSwitching, bufferTimeCount, sampleDefault

    var testDescription: String { rawValue }

    var sources: Int {
        switch self {
        case .merge, .concat, .then, .zip, .combineLatest, .catch, .catchTo, .takeUntil, .sample: 2
        case .withLatest, .skipUntil, .timeoutSwitching, .sampleDefault: 2
        case .flatMap, .switchToLatest, .concatMap, .retry: 3
        case .flatMapMaxConcurrent, .flatMapFirst, .retryBackoff: 3
        default: 1
        }
    }

    /// The real operator over `s`, its values as text.
    func real(_ s: [Signal<Int>], _ p: ModelInputs, _ clock: TestScheduler) -> Signal<String> {
        let interval = Duration.milliseconds(p.interval)
        let text: (Int) -> String = { "\($0)" }
        let inner: (Int) -> Signal<Int> = { s[1 + $0 % 2] }
        switch self {
        case .map: return s[0].map { $0 * 10 + 1 }.map(text)
        case .filter: return s[0].filter { $0 % 2 == 0 }.map(text)
        case .compactMap: return s[0].compactMap { $0 % 3 == 0 ? nil : $0 * 2 }.map(text)
        case .scan: return s[0].scan(0, +).map(text)
        case .take: return s[0].take(p.count).map(text)
        case .skip: return s[0].skip(2).map(text)
        case .takeWhile: return s[0].take(while: { $0 < 3 }).map(text)
        case .skipWhile: return s[0].skip(while: { $0 < 3 }).map(text)
        case .distinctUntilChanged: return s[0].distinctUntilChanged().map(text)
        case .startWith: return s[0].startWith(7, 8).map(text)
        case .reduce: return s[0].reduce(0, +).map(text)
        case .collect: return s[0].collect().map { "\($0)" }
        case .first: return s[0].first().map(text)
        case .last: return s[0].last().map(text)
        case .ignoreValues: return s[0].ignoreValues().map(text)
        case .materialize:
            return s[0].materialize().map { event in
                switch event {
                case .next(let value): "n\(value)"
                case .completed: "c"
                case .error(let error): "e\(error)"
                }
            }
        case .merge: return s[0].merge(s[1]).map(text)
        case .concat: return s[0].concat(s[1]).map(text)
        case .zip: return Signal<Int>.zip([s[0], s[1]]).map { "\($0)" }
        case .combineLatest: return Signal<Int>.combineLatest([s[0], s[1]]).map { "\($0)" }
        case .flatMap: return s[0].flatMap(inner).map(text)
        case .switchToLatest: return s[0].map(inner).switchToLatest().map(text)
        case .concatMap: return s[0].concatMap(inner).map(text)
        case .flatMapMaxConcurrent: return s[0].flatMap(maxConcurrent: 2, inner).map(text)
        case .flatMapFirst: return s[0].flatMapFirst(inner).map(text)
        case .then: return s[0].then(s[1]).map(text)
        case .catch: return s[0].catch { _ in s[1] }.map(text)
        case .catchTo: return s[0].catchTo(s[1]).map(text)
        case .retry:
            let attempts = Box(0)
            return Signal<Int> { subscriber in
                let attempt = attempts.mutate { count in
                    defer { count += 1 }
                    return count
                }
                return s[attempt].subscribe(subscriber)
            }.retry(2).map(text)
        case .retryBackoff:
            let attempts = Box(0)
            return Signal<Int> { subscriber in
                let attempt = attempts.mutate { count in
                    defer { count += 1 }
                    return count
                }
                return s[attempt].subscribe(subscriber)
            }.retry(upTo: 2, backoff: .constant(interval), on: clock).map(text)
        case .takeUntil: return s[0].take(until: s[1]).map(text)
        case .sample: return s[0].sample(s[1]).map(text)
        case .delay: return s[0].delay(interval, on: clock).map(text)
        case .debounce: return s[0].debounce(interval, on: clock).map(text)
        case .throttle: return s[0].throttle(interval, on: clock).map(text)
        case .bufferCount: return s[0].buffer(count: 2).map { "\($0)" }
        case .bufferTimeSpan: return s[0].buffer(timeSpan: interval, on: clock).map { "\($0)" }
        case .timeout: return s[0].timeout(interval, on: clock).map(text)
        case .deliverOn: return s[0].deliver(on: clock).map(text)
        case .subscribeOn: return s[0].subscribe(on: clock).map(text)
        case .withLatest: return s[0].withLatest(from: s[1]).map { "(\($0),\($1))" }
        case .combinePrevious: return s[0].combinePrevious(7).map { "(\($0),\($1))" }
        case .scanInto: return s[0].scan(into: 0) { $0 += $1 }.map(text)
        case .skipUntil: return s[0].skip(until: s[1]).map(text)
        case .takeLast: return s[0].take(last: p.count).map(text)
        case .takeWhileInclusive: return s[0].take(while: { $0 < 3 }, inclusive: true).map(text)
        case .elementAt: return s[0].element(at: p.count).map(text)
        case .takeFor: return s[0].take(for: interval, on: clock).map(text)
        case .skipFor: return s[0].skip(for: interval, on: clock).map(text)
        case .throttleFirst: return s[0].throttle(interval, latest: false, on: clock).map(text)
        case .timeoutSwitching: return s[0].timeout(interval, on: clock, switchingTo: s[1]).map(text)
        case .bufferTimeCount: return s[0].buffer(timeSpan: interval, count: 2, on: clock).map { "\($0)" }
        case .sampleDefault: return s[0].sample(s[1], default: 9).map(text)
        }
    }
}

/// A weak reference, filled in after the object exists.
final class WeakBox<Object: AnyObject> {
    weak var object: Object?
}

/// The subscriber of the real result: records what it gets, with the virtual time, and for
/// `disposeOnOutput` disposes itself and the subscription from inside that callback (itself,
/// because a synchronous producer sends during `subscribe`, before the disposable exists).
func modelSink(
    clock: TestScheduler, log: Box<[ModelOutput]>, subscription: SerialDisposable, disposeOnOutput: Int?,
    sends: [Int: (subject: Subject<Int>, value: Int)], afterDispose: @escaping () -> Void
) -> Subscriber<String> {
    let me = WeakBox<Subscriber<String>>()
    func record(_ text: String) {
        let time = Int((clock.now / .milliseconds(1)).rounded())
        let count = log.mutate { log in
            log.append(ModelOutput(time: time, text: text))
            return log.count
        }
        if let send = sends[count] { send.subject.sendNext(send.value) }
        if count == disposeOnOutput {
            me.object?.dispose()
            subscription.dispose()
            afterDispose()
        }
    }
    let sink = Subscriber<String>(
        next: { record($0) },
        error: { error in
            switch error {
            case let error as TestError: record("#\(error.message)")
            case is TimeoutError: record("#timeout")
            default: record("#\(error)")
            }
        },
        completed: { record("|") })
    me.object = sink
    return sink
}

/// A cold source: sends `script` to each subscriber at once, stopping when it is disposed.
func coldSignal(_ script: [ModelEvent]) -> Signal<Int> {
    Signal { subscriber in
        for event in script {
            if subscriber.isDisposed { return nil }
            switch event {
            case .next(let value): subscriber.sendNext(value)
            case .completed: subscriber.sendCompleted()
            case .error(let name): subscriber.sendError(TestError(name))
            }
        }
        return nil
    }
}

/// Runs `op` on `inputs` for real and in the reference; returns a failure message, or nil.
func checkAgainstReference(_ op: ModelOperator, _ inputs: ModelInputs) -> String? {
    let world = ReferenceWorld(
        subjects: op.sources, cold: inputs.cold, disposeOnOutput: inputs.disposeOnOutput, reentrant: inputs.reentrant)
    defer { world.tearDown() }
    op.reference(world, inputs)
    world.play(inputs)

    let clock = TestScheduler()
    let subjects = (0..<op.sources).map { _ in Subject<Int>() }
    let subscription = SerialDisposable()
    // Right after a dispose, the only live actions on the clock are the test's own inputs.
    let testActionsPending = Box(inputs.inputs.count + (inputs.disposeAt == nil ? 0 : 1))
    let subscribed = Box(false)
    let lateWork = Box<String?>(nil)
    let checkAfterDispose: @Sendable (String) -> Void = { when in
        guard subscribed.value, lateWork.value == nil else { return }  // a dispose inside subscribe waits for its return
        let extra = clock.livePendingCount - testActionsPending.value
        if extra != 0 { lateWork.value = "\(extra) actions still scheduled right after the dispose \(when)" }
    }
    for input in inputs.inputs {
        let subject = subjects[input.source]
        let event: Event<Int> = switch input.event {
        case .next(let value): .next(value)
        case .completed: .completed
        case .error(let name): .error(TestError(name))
        }
        clock.schedule(after: .milliseconds(input.time)) {
            testActionsPending.mutate { $0 -= 1 }
            subject.send(event)
        }
    }
    if let disposeAt = inputs.disposeAt {
        clock.schedule(after: .milliseconds(disposeAt)) {
            testActionsPending.mutate { $0 -= 1 }
            subscription.dispose()
            checkAfterDispose("at \(disposeAt) ms")
        }
    }
    let log = Box<[ModelOutput]>([])
    weak var weakSink: Subscriber<String>?
    do {
        let sink = modelSink(
            clock: clock, log: log, subscription: subscription, disposeOnOutput: inputs.disposeOnOutput,
            sends: world.sends.mapValues { (subjects[$0.source], $0.value) }, afterDispose: { checkAfterDispose("from the subscriber") })
        weakSink = sink
        let sources = subjects.enumerated().map { index, subject in
            inputs.cold[index].map(coldSignal) ?? subject.asSignal()
        }
        subscription.disposable = op.real(sources, inputs, clock).subscribe(sink)
        subscribed.value = true
    }
    clock.advance(to: .milliseconds(ModelInputs.horizon))
    subscription.dispose()

    var problems: [String] = []
    if log.value != world.output {
        problems.append("expected \(world.output.map(\.description)), got \(log.value.map(\.description))")
    }
    if let lateWork = lateWork.value { problems.append(lateWork) }
    if clock.livePendingCount != 0 { problems.append("\(clock.livePendingCount) actions left scheduled") }
    for (index, subject) in subjects.enumerated() where subject.storage.subscriberCount != 0 {
        problems.append("s\(index) still has \(subject.storage.subscriberCount) subscribers")
    }
    if weakSink != nil { problems.append("the subscriber was not freed") }
    return problems.isEmpty ? nil : problems.joined(separator: "; ")
}

/// Serialized: its 40 CPU-bound cases would otherwise fill the test pool's threads at once and
/// hold up the timing-sensitive suites running beside them.
@Suite(.leakChecked, .serialized, .offThePool) struct OperatorReferenceModelTests {
    /// Runs per operator (× 40 operators: 20,000 per `swift test`, about 2 s of CPU in a debug build);
    /// `RIPPLE_MODEL_RUNS` overrides it for a longer search.
    static let runs = ProcessInfo.processInfo.environment["RIPPLE_MODEL_RUNS"].flatMap { Int($0) } ?? Workload.size(500)

    /// The seed of run `run` of `op`: FNV-1a of the operator's name, plus the run.
    static func seed(_ op: ModelOperator, run: Int) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in op.rawValue.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return hash &+ UInt64(run)
    }

    static func inputs(_ op: ModelOperator, seed: UInt64) -> ModelInputs {
        var random = SeededGenerator(seed: seed)
        return ModelInputs.random(sources: op.sources, using: &random)
    }

    /// `delay` whose error's delivery disposes the subscription while `fail` holds the timers it
    /// took out of the table: it matches the reference, and none of those timers stays scheduled.
    /// The seed's program, without re-entrant sends.
    @Test(arguments: [
        (ModelOperator.delay, UInt64(5_892_760_507_766_378_022)),
    ])
    func delayLeavesNoTimerScheduledWhenItsErrorDisposesTheSubscription(_ op: ModelOperator, seed: UInt64) {
        var inputs = Self.inputs(op, seed: seed)
        inputs.reentrant = [:]  // the program this seed pins has no re-entrant sends
        if let failure = checkAgainstReference(op, inputs) { Issue.record("\(op) seed \(seed): \(inputs): \(failure)") }
    }

    /// Random marbles and a random dispose time (on the clock, or from inside the subscriber's
    /// callback for its n-th event): the real operator sends what the reference
    /// does, at the same virtual times; afterwards nothing is left scheduled, no source has a
    /// subscriber and the subscriber is freed. A failure names its seed and inputs.
    @Test(arguments: ModelOperator.allCases)
    func operatorMatchesTheReferenceModel(_ op: ModelOperator) {
        for run in 0..<Self.runs {
            let seed = Self.seed(op, run: run)
            let inputs = Self.inputs(op, seed: seed)
            if let failure = checkAgainstReference(op, inputs) {
                Issue.record("\(op) seed \(seed): \(inputs): \(failure)")
                return  // one report per operator
            }
        }
    }
}
