// Every documented call shape of the public API (events, cold signals, disposables, hot subjects,
// schedulers, operators), used in a nonisolated function, and again (the marker below)
// in a @MainActor function. Runs to exit 0.
// also-main-actor
import Dispatch
import Ripple

nonisolated func shapes() throws {
    struct Failure: Error {}
    let e = Failure()

    // Events
    let events: [Event<Int>] = [.next(1), .error(e), .completed]
    _ = events

    // Cold signals
    let s = Signal<Int> { subscriber in
        subscriber.sendNext(1)
        subscriber.sendCompleted()
        return ActionDisposable { /* cancel work */ }
    }
    let s2 = Signal<Int> { subscriber in
        if !subscriber.isDisposed { subscriber.sendNext(2) }
        subscriber.sendCompleted()
        return nil
    }
    var seen: [Int] = []
    let d: any Disposable = s.subscribe(next: { v in seen.append(v) }, error: { e in _ = e }, completed: { seen.append(-1) })
    s.subscribe(next: { v in seen.append(v) })
    s.subscribe(error: { _ in })
    s.subscribe(completed: {})
    s.subscribe()
    s.subscribeNext { v in seen.append(v) }
    let subscriber = Subscriber<Int>(next: { v in seen.append(v) }, error: { _ in }, completed: {})
    s.subscribe(subscriber)
    subscriber.sendNext(3); subscriber.sendError(e); subscriber.sendCompleted()
    _ = subscriber.isDisposed
    _ = Signal<Int>.just(1); _ = Signal<Int>.empty; _ = Signal<Int>.never; _ = Signal<Int>.error(e)
    _ = Signal.from([1, 2, 3])
    let erased: Signal<Int> = s2.asSignal()
    d.dispose()

    // Disposables
    let a = ActionDisposable { }
    let b = ActionDisposable()
    let compound = CompoundDisposable([a, b])
    compound.add(ActionDisposable { })
    compound.remove(a)
    let serial = SerialDisposable()
    serial.disposable = ActionDisposable { }
    _ = serial.disposable
    let previous = serial.swap(ActionDisposable { })
    previous?.dispose()
    let scoped = ScopedDisposable(ActionDisposable { })
    let scoped2 = ActionDisposable { }.scoped()
    _ = (scoped, scoped2)
    let keyed = KeyedDisposable<String>()
    keyed["k"] = ActionDisposable { }
    _ = keyed["k"]
    keyed.dispose()
    ActionDisposable { }.disposed(by: compound)
    compound.dispose()
    serial.dispose()
    _ = a.isDisposed
    let meta: MetaDisposable = SerialDisposable()
    let set: DisposableSet = CompoundDisposable()
    _ = (meta, set)

    // Hot subjects
    let subject = Subject<String>()
    let behavior = BehaviorSubject(0)
    _ = behavior.value
    let replay = ReplaySubject<Int>(capacity: 3)
    let unlimited = ReplaySubject<Int>()
    let test = TestScheduler()
    let recent = ReplaySubject<Int>(capacity: 100, maxAge: .seconds(30), scheduler: test)
    final class Owner { var count = 0 }
    let owner = Owner()
    subject.observe(owner: owner) { owner, value in owner.count += value.count }
    subject.observeOnce { value in seen.append(value.count) }
    behavior.observe(owner: owner, on: ImmediateScheduler.shared) { owner, value in owner.count += value }
    replay.observe(owner: owner) { owner, value in owner.count += value }
    subject.sendNext("a"); subject.sendError(e); subject.sendCompleted()
    behavior.sendNext(1); replay.sendNext(1); unlimited.sendNext(2); recent.sendNext(3)
    s.subscribe(replay)                               // multicast a cold signal into a subject
    let bs = Signal.from([1, 2]).subscribe(behavior)
    _ = bs

    // Schedulers
    let immediate = ImmediateScheduler.shared
    let serialQ = SerialQueueScheduler(label: "db")
    let wrapped = SerialQueueScheduler(queue: DispatchQueue(label: "q"))
    let background = BackgroundScheduler(qos: .utility)
    let mainScheduler = MainActorScheduler.shared
    actor Store {}
    let actorScheduler = ActorScheduler(Store())
    immediate.schedule { }
    immediate.schedule(after: .milliseconds(1)) { }
    serialQ.schedule { _ = Schedulers.current }
    wrapped.schedule(after: .milliseconds(1)) { }
    background.schedule { }
    mainScheduler.schedule { }
    actorScheduler.schedule { }
    test.schedule(after: .seconds(1)) { }
    _ = test.now
    test.advance(by: .seconds(1))
    test.run()
    _ = Schedulers.current

    // Operators
    let n = Signal.from([1, 2, 3, 2])
    let other = Signal.from([4, 5])
    _ = n.map { $0 + 1 }.filter { $0 > 2 }.compactMap { $0 > 3 ? $0 : nil }
    _ = n.scan(0, +); _ = n.reduce(0, +); _ = n.collect(); _ = n.ignoreValues()
    _ = n.materialize().dematerialize() as Signal<Int>
    _ = n.distinctUntilChanged(); _ = n.distinctUntilChanged(by: { old, new in old == new })
    _ = n.startWith(0)
    _ = n.take(2); _ = n.skip(1); _ = n.take(until: other); _ = n.take(while: { $0 < 3 })
    _ = n.skip(while: { $0 < 2 }); _ = n.first(); _ = n.last()
    _ = n.merge(other); _ = n.concat(other); _ = n.zip(other); _ = n.zip(other, other)
    _ = n.combineLatest(other); _ = n.combineLatest(other, other)
    _ = Signal<Int>.combineLatest([n, other, erased]); _ = Signal<Int>.zip([n, other]); _ = Signal<Int>.merge([n, other])
    _ = n.flatMap { Signal.just($0) }; _ = n.concatMap { Signal.just($0) }
    _ = n.map { Signal.just($0) }.switchToLatest(); _ = n.flatMapLatest { Signal.just($0) }
    _ = n.then(other)
    _ = n.catch { _ in Signal.just(0) }; _ = n.catchTo(other); _ = n.retry(2)
    _ = n.retry(); _ = n.retry(when: { errors in errors.take(1) })
    _ = n.retry(upTo: 3, backoff: .exponential(initial: .milliseconds(100), multiplier: 2, maximum: .seconds(5), jitter: 0.5), on: serialQ)
    _ = n.retry(upTo: 3, backoff: .constant(.seconds(1)), on: test); _ = n.retry(upTo: 1, backoff: .immediate, on: background)
    _ = n.flatMap(maxConcurrent: 2) { Signal.just($0) }; _ = n.flatMapFirst { Signal.just($0) }
    _ = Signal<Int>.deferred { n }
    _ = n.share(replay: 1); _ = n.multicast(makeSubject: { ReplaySubject<Int>(capacity: 1) })
    _ = n.timeout(.seconds(1), on: test)
    _ = n.delay(.seconds(1), on: test); _ = n.throttle(.seconds(1), on: test); _ = n.debounce(.seconds(1), on: test)
    _ = n.buffer(count: 2); _ = n.buffer(timeSpan: .seconds(1), on: test); _ = n.sample(other)
    _ = Signal<Int>.interval(.milliseconds(10), on: test); _ = Signal<Int>.timer(.seconds(1), on: test)
    _ = n.onNext { seen.append($0) }.onError { _ in }.onCompleted { }.onSubscribe { }.onDispose { }
    _ = n.subscribe(on: serialQ); _ = n.deliver(on: background); _ = n.deliver(on: mainScheduler)
    let connection = n.multicast(Subject<Int>())
    connection.connect()
    _ = n.publish().autoconnect()
    _ = n.replay(); _ = n.replayLast(); _ = n.replayLazily(capacity: 2); _ = n.share()
    let stream: AsyncThrowingStream<Int, any Error> = n.values
    _ = stream
    _ = Signal(sequence: AsyncStream<Int> { c in c.yield(1); c.finish() })
    try n.waitUntilCompleted(timeout: .seconds(1))
    precondition(n.first(timeout: .seconds(1)) == 1)
    _ = n.log("n", output: { _ in })
    _ = n |> map { $0 + 1 } |> filter { $0 > 2 }
    let pipelined = n |> map { $0 * 2 } |> take(2)
    _ = pipelined

    // From the other seed systems
    let promise = Promise<Int>()
    promise.set(n)
    _ = promise.get()
    _ = Promise(1).get()
    let valuePromise = ValuePromise(0, ignoreRepeated: true)
    valuePromise.set(1)
    _ = valuePromise.value
    _ = valuePromise.get()
    let (lifetime, token) = Lifetime.make()
    _ = n.take(during: lifetime)
    token.end()

    // Same-thread delivery: what a synchronous subscription saw.
    let local = Subject<Int>()
    var total = 0
    local.subscribeNext { total += $0 }
    local.sendNext(5)
    precondition(total == 5, "total \(total)")
    _ = seen
}

try shapes()
