import Foundation
import Synchronization
import Testing
@testable import Ripple
import RippleTestSupport

/// What a subject's subscription must keep however it stores its closures (one
/// allocation per subscription) and however a late subscriber's replay is delivered (no copy
/// of the history per join): closures released at once, never while one runs, every kind of
/// closure called; replays in order, exactly between the events accepted before and after.
@Suite(.leakChecked) struct SubjectSubscriptionTests {
    final class Captured: @unchecked Sendable {}

    @Test(arguments: SubjectKind.allCases)
    func everyClosureOfADisposedSubscriptionIsReleasedAtOnce(kind: SubjectKind) {
        let (signal, _) = kind.make()
        weak var weakNext: Captured?, weakError: Captured?, weakCompleted: Captured?
        let d: any Disposable
        do {
            let next = Captured(), error = Captured(), completed = Captured()
            weakNext = next; weakError = error; weakCompleted = completed
            d = signal.subscribe(next: { _ in _ = next }, error: { _ in _ = error }, completed: { _ = completed })
        }
        #expect(weakNext != nil && weakError != nil && weakCompleted != nil)
        d.dispose()
        #expect(weakNext == nil && weakError == nil && weakCompleted == nil)
    }

    @Test(arguments: SubjectKind.allCases)
    func terminalClosuresAloneAreCalledAndReleased(kind: SubjectKind) {
        var log: [String] = []
        weak var weakCaptured: Captured?
        let (failing, failingInput) = kind.make()
        let (completing, completingInput) = kind.make()
        do {
            let captured = Captured()
            weakCaptured = captured
            failing.subscribe(error: { _ in _ = captured; log.append("error") })
            completing.subscribe(completed: { log.append("completed") })
        }
        failingInput.sendNext(1)
        failingInput.sendError(TestError())
        completingInput.sendCompleted()
        #expect(log == ["error", "completed"])
        #expect(weakCaptured == nil)
    }

    /// A callback disposing another subscription of the same subject mid-walk: that one gets
    /// nothing more (not even the value being delivered, if it comes later in the list), and its
    /// closures are gone once the send returns.
    @Test(arguments: SubjectKind.allCases)
    func aCallbackDisposingAnotherSubscriptionMidWalk(kind: SubjectKind) {
        let (signal, input) = kind.make()
        var log: [String] = []
        weak var weakLater: Captured?
        let later = Box<(any Disposable)?>(nil)
        let first = signal.subscribeNext { value in
            log.append("first \(value)")
            if value == 1 { later.value?.dispose() }
        }
        do {
            let captured = Captured()
            weakLater = captured
            later.mutate { $0 = signal.subscribeNext { value in _ = captured; log.append("later \(value)") } }
        }
        input.sendNext(1)
        input.sendNext(2)
        let initial = kind == .behavior ? ["first 0", "later 0"] : []
        #expect(log == initial + ["first 1", "first 2"])
        #expect(weakLater == nil)
        first.dispose()
        later.mutate { $0 = nil }
    }

    /// A callback disposing its own subscription keeps running with everything it captured;
    /// the closures go once it has returned.
    @Test(arguments: SubjectKind.allCases)
    func aCallbackDisposingItselfRunsToItsEndThenItsClosuresGo(kind: SubjectKind) {
        final class Payload: @unchecked Sendable { var touched = 0 }
        let (signal, input) = kind.make()
        weak var weakPayload: Payload?
        let me = Box<(any Disposable)?>(nil)
        do {
            let payload = Payload()
            weakPayload = payload
            me.mutate {
                $0 = signal.subscribeNext { value in
                    guard value == 7 else { return }
                    me.value?.dispose()
                    payload.touched += 1  // still alive: the closure is running
                    payload.touched += 1
                }
            }
        }
        input.sendNext(7)
        #expect(weakPayload == nil)
        me.mutate { $0 = nil }
    }

    /// Disposed from inside its own terminal callback, a subscription is detached twice — by
    /// the terminal event's `endStream`, then by the tidy of that dispose — and the second finds
    /// nothing left: the callback ran once, the closures are released once, nothing traps.
    @Test(arguments: SubjectKind.allCases)
    func aSubscriptionDisposedInItsOwnTerminalCallbackIsReleasedOnce(kind: SubjectKind) {
        final class Counted: @unchecked Sendable {  // counted only by this test case's own thread
            let deinits: Box<Int>
            init(_ deinits: Box<Int>) { self.deinits = deinits }
            deinit { deinits.mutate { $0 += 1 } }
        }
        let (signal, input) = kind.make()
        let me = Box<(any Disposable)?>(nil)
        let deinits = Box(0)
        var completions = 0
        do {
            let counted = Counted(deinits)
            me.mutate {
                $0 = signal.subscribe(next: { _ in _ = counted }, completed: {
                    _ = counted
                    completions += 1
                    me.value?.dispose()
                })
            }
        }
        input.sendCompleted()
        #expect(completions == 1)
        #expect(deinits.value == 1, "released once, when the terminal event ended the subscription")
        me.value?.dispose()
        me.mutate { $0 = nil }
        #expect(deinits.value == 1)
    }

    /// Debug builds check that only the delivery turn's holder touches a subject's subscriber
    /// list: a path that forgot to take the turn stops with a message instead of racing.
    @Test func touchingASubjectsSubscriberListWithoutItsTurnStopsWithAMessage() async {
        #if DEBUG
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let subject = Subject<Int>()
            subject.storage.checkHolder("a test")
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("a test touched a subject's subscriber list without holding its delivery turn"))
        #endif
    }

    @Test func aLateSubscriberToAFullReplaySubjectGetsTheRetainedValuesThenLiveOnes() {
        let replay = ReplaySubject<Int>(capacity: 100)
        for value in 0..<1_000 { replay.sendNext(value) }
        var seen: [Int] = []
        let d = replay.subscribeNext { seen.append($0) }
        replay.sendNext(1_000)
        #expect(seen == Array(900...1_000))
        d.dispose()
        for _ in 0..<3 {  // joining again and again (the replay's buffer is reused)
            var again: [Int] = []
            replay.subscribeNext { again.append($0) }.dispose()
            #expect(again == Array(901...1_000))
        }
    }

    /// A late subscriber whose subscription ends inside its replay (`take(3)` completes and
    /// disposes it) gets nothing more — not the rest of the replay, not live values — and every
    /// closure is released (a closure subscription's replay looks its closure up once).
    @Test func aSubscriptionEndingInsideItsReplayGetsNothingMoreAndIsReleased() {
        final class Owner {}
        weak var weakOwner: Owner?
        let replay = ReplaySubject<Int>(capacity: 100)
        for value in 0..<100 { replay.sendNext(value) }
        var seen: [Int] = []
        var completions = 0
        do {
            let owner = Owner()
            weakOwner = owner
            replay.take(3).subscribe(next: { _ = owner; seen.append($0) }, completed: { completions += 1 })
        }
        replay.sendNext(100)
        #expect(seen == [0, 1, 2])
        #expect(completions == 1)
        #expect(weakOwner == nil)
        #expect(replay.storage.subscriberCount == 0)
        var again: [Int] = []
        replay.subscribeNext { again.append($0) }.dispose()
        #expect(again == Array(1...100))
    }

    /// A subscriber that joins from inside a replayed value's callback gets its own replay, whole
    /// and in order, after the outer replay (it is queued behind it), and live values after both.
    @Test func aSubscribeFromInsideAReplayGetsItsOwnWholeReplay() {
        let replay = ReplaySubject<Int>(capacity: 5)
        for value in 1...5 { replay.sendNext(value) }
        var log: [String] = []
        var inner: (any Disposable)?
        let outer = replay.subscribeNext { value in
            log.append("outer \(value)")
            if value == 2, inner == nil {
                inner = replay.subscribeNext { log.append("inner \($0)") }
                replay.sendNext(6)  // re-entrant: after both replays
            }
        }
        #expect(log == ["outer 1", "outer 2", "outer 3", "outer 4", "outer 5",
                        "inner 1", "inner 2", "inner 3", "inner 4", "inner 5",
                        "outer 6", "inner 6"])
        outer.dispose()
        inner?.dispose()
    }

    /// Replayed reference values are retained for the replay and released after it: no value is
    /// freed early (the subscriber reads each) or kept (the subject's end frees them all).
    @Test func replayedObjectsAreNeitherFreedEarlyNorKept() {
        final class Item: @unchecked Sendable { let n: Int; init(_ n: Int) { self.n = n } }
        weak var weakFirst: Item?
        do {
            let replay = ReplaySubject<Item>(capacity: 50)
            for n in 0..<200 {
                let item = Item(n)
                if n == 150 { weakFirst = item }
                replay.sendNext(item)
            }
            for _ in 0..<5 {
                var sum = 0
                replay.subscribeNext { sum += $0.n }.dispose()
                #expect(sum == (150..<200).reduce(0, +))
            }
            #expect(weakFirst != nil)
        }
        #expect(weakFirst == nil)
    }

    /// A subscriber joining while another thread floods the subject gets a gapless run: the
    /// retained values, then every value accepted after the join, each once, in order.
    @Test(.offThePool) func aJoinDuringAFloodSeesNoGapAndNoDuplicate() {
        let replay = ReplaySubject<Int>(capacity: 100)
        let stop = Atomic<Bool>(false)
        let sender = Thread {
            var value = 0
            while !stop.load(ordering: .relaxed) {
                replay.sendNext(value)
                value += 1
            }
        }
        sender.start()
        for _ in 0..<200 {
            let seen = Box<[Int]>([])
            let d = replay.subscribeNext { value in seen.mutate { $0.append(value) } }
            usleep(50)
            d.dispose()
            let values = seen.value
            if let first = values.first {
                #expect(values == Array(first..<(first + values.count)), "a gap or a duplicate")
            }
        }
        stop.store(true, ordering: .relaxed)
        while !sender.isFinished { usleep(100) }
    }
}

/// A subject that goes away ends every subscription and frees everything — its storage and
/// history too — whatever the user still holds (subscriptions hold the storage weakly:
/// `GoneSubjectStorageTests`).
@Suite(.leakChecked) struct SubjectGoesAwayTests {
    final class Owner {}

    @Test func aSubjectGoingAwayReleasesItsSubscriptionsClosuresAndItsStorage() {
        weak var weakOwner: Owner?
        weak var weakStorage: SubjectStorage<Int, NoHistory<Int>>?
        var kept: (any Disposable)?
        do {
            let subject = Subject<Int>()
            weakStorage = subject.storage
            let owner = Owner()
            weakOwner = owner
            kept = subject.subscribe(next: { _ in _ = owner }, completed: { _ = owner })
            subject.sendNext(1)
        }
        #expect(weakOwner == nil)  // ended and released although `kept` lives
        #expect(weakStorage == nil)  // the subscription does not keep the storage
        kept?.dispose()  // and disposing it afterwards is harmless
        kept = nil
    }

    @Test func everyKindOfSubjectEndsAColdPipelineOnItWhenItGoesAway() {
        var cleanups = 0
        var kept: [any Disposable] = []
        weak var weakReplayStorage: SubjectStorage<Int, ReplayHistory<Int>>?
        do {
            let subject = Subject<Int>()
            let behavior = BehaviorSubject(0)
            let replay = ReplaySubject<Int>(capacity: 3)
            weakReplayStorage = replay.storage
            replay.sendNext(1)
            for source in [subject.asSignal(), behavior.asSignal(), replay.asSignal()] {
                let pipeline = Signal<Int> { subscriber in
                    let inner = source.subscribe(subscriber)
                    return ActionDisposable { cleanups += 1; inner.dispose() }
                }.map { $0 }
                kept.append(pipeline.subscribeNext { _ in })
            }
        }
        #expect(cleanups == 3)
        kept.forEach { $0.dispose() }
        #expect(cleanups == 3)
        kept = []
        #expect(weakReplayStorage == nil)
    }

    @Test func aSubjectsOwnedObservationsGoWithIt() {
        weak var weakStorage: SubjectStorage<Int, LatestValue<Int>>?
        let owner = Owner()
        var seen: [Int] = []
        do {
            let subject = BehaviorSubject(1)
            weakStorage = subject.storage
            subject.observe(owner: owner) { _, value in seen.append(value) }
            subject.sendNext(2)
        }
        #expect(seen == [1, 2])
        #expect(weakStorage == nil)
    }

    /// A subject whose last reference a subscriber's closure drops during a delivery: the
    /// delivery finishes (the sender holds the subject for the call), then the subject goes.
    @Test func aSubjectReleasedFromInsideItsOwnCallbackGoesOnceTheDeliveryFinishes() {
        final class Holder { var subject: Subject<Int>? }
        let holder = Holder()
        var log: [String] = []
        weak var weakStorage: SubjectStorage<Int, NoHistory<Int>>?
        do {
            let subject = Subject<Int>()
            weakStorage = subject.storage
            holder.subject = subject
            subject.subscribe(next: { value in
                log.append("first \(value)")
                holder.subject = nil
            })
            subject.subscribe(next: { log.append("second \($0)") })
        }
        holder.subject?.sendNext(1)
        #expect(log == ["first 1", "second 1"])
        #expect(holder.subject == nil)
        #expect(weakStorage == nil)
    }
}

#if os(Linux)
/// glibc's `malloc_usable_size` (not in the Glibc module): the usable bytes of a heap block.
@_silgen_name("malloc_usable_size") private func mallocUsableSize(_ pointer: UnsafeMutableRawPointer?) -> Int
#endif

/// What an idle subject subscription holds: a `subscribeNext` outside any `RippleDebug.Scope` is
/// one heap block of at most 64 bytes; terminal closures or a scope add a second object, which
/// keeps the scope's count right. No `.leakChecked` here: its scope would give every
/// subscription that second object.
@Suite struct SubjectSubscriptionSizeTests {
    final class Captured: @unchecked Sendable {}

    @Test func aSubscribeNextSubscriptionIsOneBlockOf64BytesWithNothingBeside() throws {
        let subject = Subject<Int>()
        weak var weakEntry: ClosureSubscription<Int, NoHistory<Int>>?
        do {
            let captured = Captured()
            let subscription = subject.subscribeNext { _ in _ = captured }
            let entry = try #require(subscription as? ClosureSubscription<Int, NoHistory<Int>>)
            weakEntry = entry
            #expect(entry.extras == nil, "a subscription without terminal closures or scope made a second object")
            #if os(Linux)
            let block = mallocUsableSize(Unmanaged.passUnretained(entry).toOpaque())
            #expect(block <= 56, "the subscription's heap block grew to \(block) usable bytes")
            #endif
            subscription.dispose()
        }
        #expect(weakEntry == nil, "a disposed subscription outlived its last reference")
    }

    @Test func aReceiverSubscriptionIsOneBlockOf64BytesToo() throws {
        let subject = Subject<Int>()
        let subscription = subject.subscribe(Subscriber<Int>(next: { _ in }))
        let entry = try #require(subscription as? ReceiverSubscription<Int, NoHistory<Int>>)
        #expect(entry.extras == nil)
        #if os(Linux)
        let block = mallocUsableSize(Unmanaged.passUnretained(entry).toOpaque())
        #expect(block <= 56, "the receiver subscription's heap block grew to \(block) usable bytes")
        #endif
        subscription.dispose()
    }

    @Test func terminalClosuresAndADebugScopeLiveBesideTheSubscription() throws {
        let subject = Subject<Int>()
        let withTerminal = subject.subscribe(next: { _ in }, completed: {})
        let terminalEntry = try #require(withTerminal as? ClosureSubscription<Int, NoHistory<Int>>)
        let terminalExtras = try #require(terminalEntry.extras)
        #expect(terminalExtras._withUnsafeGuaranteedRef { $0.completed != nil && $0.debugScope == nil })

        let scope = RippleDebug.Scope()
        let receiver = Subscriber<Int>(next: { _ in })
        RippleDebug.counting(in: scope) {
            let scoped = subject.subscribeNext { _ in }
            let counted = subject.subscribe(receiver)
            #expect(scope.liveSubscriptions == 2)  // `receiver` was made outside the scope
            for subscription in [scoped, counted] {
                let entry = subscription as? SubjectSubscription<Int, NoHistory<Int>>
                #expect(entry?.extras?._withUnsafeGuaranteedRef { $0.debugScope === scope } == true)
            }
            scoped.dispose()
            counted.dispose()
        }
        withTerminal.dispose()
        #expect(scope.liveSubscriptions == 0, "a scoped subscription was not counted down when it ended")
    }
}
