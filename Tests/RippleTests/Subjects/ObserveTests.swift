import Testing
@testable import Ripple
import RippleTestSupport

@Suite(.leakChecked) struct ObserveTests {
    final class Screen {
        var shown: [Int] = []
    }

    /// Watches an object without keeping it.
    struct Weak<Object: AnyObject> {
        weak var object: Object?
        init(_ object: Object) { self.object = object }
    }

    @Test func observeHandsBackTheOwnerWithItsOwnType() {
        let subject = Subject<Int>()
        let screen = Screen()
        subject.observe(owner: screen) { owner, value in owner.shown.append(value) }
        subject.sendNext(1)
        subject.sendNext(2)
        #expect(screen.shown == [1, 2])
    }

    @Test func observeHoldsTheOwnerWeaklyAndRemovesItselfOnceItIsFreed() {
        let subject = Subject<Int>()
        weak var weakScreen: Screen?
        let delivered = Box(0)
        do {
            let screen = Screen()
            weakScreen = screen
            subject.observe(owner: screen) { _, _ in delivered.mutate { $0 += 1 } }
            subject.sendNext(1)
        }
        #expect(weakScreen == nil)  // not retained by the observation
        subject.sendNext(2)
        #expect(delivered.value == 1)
        #expect(subject.storage.subscriberCount == 0)
    }

    @Test func observeOnASchedulerDeliversThereAndNeverAfterTheOwnerIsFreed() {
        let subject = Subject<Int>()
        let clock = TestScheduler()
        var screen: Screen? = Screen()
        let onClock = Box<[Bool]>([])
        subject.observe(owner: screen!, on: clock) { owner, value in
            onClock.mutate { $0.append(Schedulers.current === clock) }
            owner.shown.append(value)
        }
        subject.sendNext(1)
        #expect(screen!.shown.isEmpty)
        clock.run()
        #expect(screen!.shown == [1])
        subject.sendNext(2)
        screen = nil
        clock.run()
        #expect(onClock.value == [true])
    }

    @Test func observeOnceEndsAfterOneValue() {
        let subject = Subject<Int>()
        var seen: [Int] = []
        let d = subject.observeOnce { seen.append($0) }
        subject.sendNext(1)
        subject.sendNext(2)
        #expect(seen == [1])
        #expect(d.isDisposed)
        #expect(subject.storage.subscriberCount == 0)
    }

    @Test func observeOnceOnABehaviorSubjectTakesTheCurrentValue() {
        let behavior = BehaviorSubject("ready")
        var seen: [String] = []
        behavior.observeOnce { seen.append($0) }
        behavior.sendNext("later")
        #expect(seen == ["ready"])
        #expect(behavior.storage.subscriberCount == 0)
    }

    @Test func aDisposedObservationFreesItsClosure() {
        final class Captured {}
        weak var weakCaptured: Captured?
        let subject = Subject<Int>()
        let screen = Screen()
        let d: any Disposable
        do {
            let captured = Captured()
            weakCaptured = captured
            d = subject.observe(owner: screen) { _, _ in _ = captured }
        }
        d.dispose()
        #expect(weakCaptured == nil)
        #expect(subject.storage.subscriberCount == 0)
    }

    @Test(arguments: ["subject", "behavior", "replay"])
    func aDeadOwnersObservationOnAQuietSubjectWithFewObservationsIsReleasedAtTheNextSubscribe(_ kind: String) {
        final class Captured {}
        weak var weakCaptured: Captured?
        let subject: any SignalProtocol<Int> & SubscriberProtocol<Int> = switch kind {
        case "behavior": BehaviorSubject(0)
        case "replay": ReplaySubject<Int>(capacity: 1)
        default: Subject<Int>()
        }
        do {
            let screen = Screen()
            let captured = Captured()
            weakCaptured = captured
            subject.observe(owner: screen) { _, _ in _ = captured }
        }
        #expect(weakCaptured != nil, "nothing has happened on the subject yet")
        let other = subject.subscribe(next: { _ in })  // no value sent
        #expect(weakCaptured == nil, "the dead owner's observation kept its captures")
        other.dispose()
    }

    @Test func aDeadOwnersObservationOnADeliveringSubjectWithFewObservationsIsReleasedAtTheNextSubscribe() {
        final class Captured {}
        weak var weakCaptured: Captured?
        let subject = Subject<Int>()
        let clock = TestScheduler()
        do {
            let screen = Screen()
            let captured = Captured()
            weakCaptured = captured
            subject.observe(owner: screen, on: clock) { _, _ in _ = captured }
        }
        subject.subscribe(next: { _ in }).dispose()
        #expect(weakCaptured == nil)
        #expect(clock.pendingCount == 0)
    }

    /// With `n` observations, a quiet subject releases every dead owner's observation within
    /// `ceil(n / checkedPerSubscribe)` subscribes, whichever of them died, and keeps the live ones.
    @Test(arguments: SubjectKind.allCases)
    func deadOwnersObservationsOnAQuietSubjectAreReleasedWithinABoundedNumberOfSubscribes(kind: SubjectKind) {
        final class Captured {}
        let subject = kind.make().signal
        let n = 40
        var owners: [Screen?] = []
        var captures: [Weak<Captured>] = []
        for _ in 0..<n {
            let owner = Screen(), captured = Captured()
            owners.append(owner)
            captures.append(Weak(captured))
            subject.observe(owner: owner) { _, _ in _ = captured }
        }
        for i in owners.indices where i % 3 != 1 { owners[i] = nil }  // two in three go, no value sent
        let bound = (n + OwnedObservations.checkedPerSubscribe - 1) / OwnedObservations.checkedPerSubscribe
        for _ in 0..<bound { subject.subscribe(next: { _ in }).dispose() }
        for i in owners.indices {
            if owners[i] == nil {
                #expect(captures[i].object == nil, "observation \(i) outlived its owner by \(bound) subscribes")
            } else {
                #expect(captures[i].object != nil, "observation \(i) was released while its owner lives")
            }
        }
    }

    /// The bound counts the subscribes `observe` itself makes: observations added meanwhile do
    /// not put off the release of those already dead.
    @Test func deadOwnersObservationsAreReleasedWithinTheBoundWhileOthersAreAdded() {
        final class Captured {}
        let subject = Subject<Int>()
        let n = 40
        var captures: [Weak<Captured>] = []
        do {
            let owners = (0..<n).map { _ in Screen() }
            for owner in owners {
                let captured = Captured()
                captures.append(Weak(captured))
                subject.observe(owner: owner) { _, _ in _ = captured }
            }
        }
        let keeper = Screen()
        let bound = (n + OwnedObservations.checkedPerSubscribe - 1) / OwnedObservations.checkedPerSubscribe
        for _ in 0..<bound { subject.observe(owner: keeper) { _, _ in } }
        #expect(captures.allSatisfy { $0.object == nil })
    }

    /// A dead owner's observation is released after the subject's lock is given up: what its
    /// closure captured may use the subject as it goes.
    @Test func aDeadOwnersCapturesMayUseTheSubjectAsTheyAreReleased() {
        final class UsesTheSubject {
            let subject: Subject<Int>, keeper: Screen
            init(_ subject: Subject<Int>, _ keeper: Screen) { self.subject = subject; self.keeper = keeper }
            deinit {
                subject.subscribe(next: { _ in }).dispose()
                subject.observe(owner: keeper) { _, _ in }
            }
        }
        let subject = Subject<Int>()
        let keeper = Screen()
        for _ in 0..<20 {
            let user = UsesTheSubject(subject, keeper)
            subject.observe(owner: Screen()) { _, _ in _ = user }  // its owner goes at once
        }
        for _ in 0..<20 { subject.subscribe(next: { _ in }).dispose() }
        subject.sendNext(1)
        #expect(subject.storage.subscriberCount == 20)  // the keeper's observations
    }

    @Test func freeingASubjectFreesObserverClosures() {
        final class Captured {}
        weak var weakCaptured: Captured?
        weak var weakSubject: Subject<Int>?
        let screen = Screen()
        do {
            let subject = Subject<Int>()
            weakSubject = subject
            let captured = Captured()
            weakCaptured = captured
            subject.observe(owner: screen) { _, _ in _ = captured }
        }
        #expect(weakSubject == nil)
        #expect(weakCaptured == nil)
    }
}

@Suite(.leakChecked) struct PromiseTests {
    @Test func getReplaysTheLatestValueThenLaterOnes() {
        let promise = Promise(1)
        var seen: [Int] = []
        promise.get().subscribeNext { seen.append($0) }
        promise.set(Signal.from([2, 3]))
        #expect(seen == [1, 2, 3])
    }

    @Test func setDisposesThePreviousSource() {
        let promise = Promise<Int>()
        let firstDisposed = Box(false)
        let first = Subject<Int>()
        promise.set(Signal<Int> { subscriber in
            let d = first.subscribe(subscriber)
            return CompoundDisposable([d, ActionDisposable { firstDisposed.value = true }])
        })
        var seen: [Int] = []
        promise.get().subscribeNext { seen.append($0) }
        first.sendNext(1)
        promise.set(Signal.just(2))
        first.sendNext(99)
        #expect(firstDisposed.value)
        #expect(seen == [1, 2])
    }

    @Test func aSourcesCompletionDoesNotEndThePromise() {
        let promise = Promise<Int>()
        let r = Recorder<Int>()
        promise.get().subscribe(r)
        promise.set(Signal.just(1))
        promise.set(Signal.just(2))
        #expect(r.events == [.next(1), .next(2)])
    }

    @Test func valuePromiseIgnoresRepeatsOnlyWhenAsked() {
        let ignoring = ValuePromise(1, ignoreRepeated: true)
        let keeping = ValuePromise(1)
        var a: [Int] = [], b: [Int] = []
        ignoring.get().subscribeNext { a.append($0) }
        keeping.get().subscribeNext { b.append($0) }
        for v in [1, 2, 2, 3] { ignoring.set(v); keeping.set(v) }
        #expect(a == [1, 2, 3])
        #expect(b == [1, 1, 2, 2, 3])
        #expect(ignoring.value == 3)
    }

    @Test func typeAliasesNameTheSwiftSignalKitTypes() {
        let meta: MetaDisposable = SerialDisposable()
        let set: DisposableSet = CompoundDisposable()
        let inner = ActionDisposable()
        meta.set(inner)
        set.add(meta)
        set.dispose()
        #expect(inner.isDisposed)
    }
}

@Suite(.leakChecked, .offThePool) struct LifetimeTests {
    @Test func takeDuringCompletesWhenTheTokenIsFreed() {
        let subject = Subject<Int>()
        let r = Recorder<Int>()
        var token: Lifetime.Token?
        do {
            let (lifetime, t) = Lifetime.make()
            token = t
            subject.take(during: lifetime).subscribe(r)
        }
        subject.sendNext(1)
        #expect(token != nil)
        token = nil
        subject.sendNext(2)
        #expect(r.events == [.next(1), .completed])
        #expect(subject.storage.subscriberCount == 0)
    }

    @Test func anEndedLifetimeCompletesAtOnceAndRunsObserversAtOnce() {
        let (lifetime, token) = Lifetime.make()
        token.end()
        #expect(lifetime.hasEnded)
        var ran = false
        lifetime.observeEnded { ran = true }
        #expect(ran)
        let r = Recorder<Int>()
        Signal<Int>.never.take(during: lifetime).subscribe(r)
        #expect(r.events == [.completed])
        #expect(Lifetime.empty.hasEnded)
    }

    @Test func disposingTakeDuringStopsObservingTheLifetime() {
        let (lifetime, token) = Lifetime.make()
        let r = Recorder<Int>()
        let d = Signal<Int>.never.take(during: lifetime).subscribe(r)
        d.dispose()
        token.end()
        #expect(r.events.isEmpty)
    }
}
