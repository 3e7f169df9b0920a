import Foundation
import Synchronization
import Testing
@testable import Ripple
import RippleTestSupport

/// Whether the calling code runs on the main queue: the main actor's executor, checked without
/// the runtime query Ripple itself uses (under `swift test` the main queue is drained by a worker
/// thread after `dispatchMain()`, so `Thread.isMainThread` cannot tell).
private let mainQueueKey: DispatchSpecificKey<Int> = {
    let key = DispatchSpecificKey<Int>()
    DispatchQueue.main.setSpecific(key: key, value: 1)
    return key
}()
private func onMainQueue() -> Bool { DispatchQueue.getSpecific(key: mainQueueKey) == 1 }

/// A forwarding operator written in nonisolated code: its inner subscription has no actor.
private func forwarding(_ source: Subject<Int>) -> Signal<Int> {
    Signal { subscriber in source.subscribeNext { subscriber.sendNext($0) } }
}

/// Subscribes from nonisolated code, recording for each value whether it arrived on the main queue.
private func record(_ signal: Signal<Int>, into log: Flags) -> any Disposable {
    signal.subscribeNext { _ in log.list.withLock { $0.append(onMainQueue()) } }
}

private final class Flags: Sendable {
    let list = Locked<[Bool]>([])
    var all: [Bool] { list.withLock { $0 } }
}

/// `observe(owner:on:)` from nonisolated code (so only the scheduler decides where it runs).
private func observe<Owner: AnyObject & Sendable>(
    _ subject: Subject<Int>, owner: Owner, on scheduler: any Scheduler, _ body: @escaping @Sendable (Int) -> Void
) -> any Disposable {
    subject.observe(owner: owner, on: scheduler) { _, value in body(value) }
}

/// Subscriptions made on the main actor: delivered there, in send order, whoever sends.
@MainActor @Suite struct MainActorDeliveryTests {
    final class Tracked {}

    init() { _ = mainQueueKey }

    @Test func aMainActorSubscriptionGetsValuesSentFromAnotherThreadOnTheMainActorInOrderThenTheTerminalOnce() async {
        let subject = Subject<Int>()
        var seen: [Int] = []
        var offMain = 0
        var completions = 0
        let subscription = subject.subscribe(
            next: { value in
                if !onMainQueue() { offMain += 1 }
                seen.append(value)
            },
            completed: { completions += 1 })
        Thread {
            for i in 0..<2_000 { subject.sendNext(i) }
            subject.sendCompleted()
        }.start()
        #expect(await eventually { completions == 1 })
        #expect(seen == Array(0..<2_000))
        #expect(offMain == 0)
        try? await Task.sleep(for: .milliseconds(20))
        #expect(completions == 1)
        subscription.dispose()
    }

    @Test func aSendOnTheActorWhileADrainIsScheduledQueuesBehindIt() async {
        let subject = Subject<Int>()
        var seen: [Int] = []
        let subscription = subject.subscribeNext { seen.append($0) }
        let sent = DispatchSemaphore(value: 0)
        Thread {
            subject.sendNext(1)  // queued for the main actor, which this test holds
            subject.sendNext(2)
            sent.signal()
        }.start()
        sent.wait()
        subject.sendNext(3)  // on the actor, but 1 and 2 wait: it must not overtake them
        #expect(seen == [])
        #expect(await eventually { seen.count == 3 })
        #expect(seen == [1, 2, 3])
        subscription.dispose()
    }

    @Test func aSendFromInsideADrainedCallbackArrivesAfterWhatWasAlreadyQueued() async {
        let subject = Subject<Int>()
        var seen: [Int] = []
        let subscription = subject.subscribeNext { value in
            seen.append(value)
            if value == 1 { subject.sendNext(100) }  // re-entrant, on the actor, during the drain
        }
        let sent = DispatchSemaphore(value: 0)
        Thread {
            subject.sendNext(1)
            subject.sendNext(2)
            sent.signal()
        }.start()
        sent.wait()
        #expect(await eventually { seen.count == 3 })
        #expect(seen == [1, 2, 100])
        subscription.dispose()
    }

    @Test func aProducerWrittenOnTheMainActorDeliversOnItAndOneWrittenNonisolatedForwardsAtOnce() async {
        let source = Subject<Int>()
        // This producer is a main-actor closure (written here): its inner subscription takes the
        // main actor. `forwarding(_:)` builds the same operator in nonisolated code.
        let hopping = Signal<Int> { subscriber in source.subscribeNext { subscriber.sendNext($0) } }
        let hopped = Flags()
        let forwarded = Flags()
        let subscriptions = [record(hopping, into: hopped), record(forwarding(source), into: forwarded)]
        let sent = DispatchSemaphore(value: 0)
        Thread {
            source.sendNext(1)
            sent.signal()
        }.start()
        sent.wait()
        #expect(forwarded.all == [false])  // synchronously, on the sender's thread
        #expect(hopped.all == [])
        #expect(await eventually { hopped.all.count == 1 })
        #expect(hopped.all == [true])
        subscriptions.forEach { $0.dispose() }
    }

    @Test func aBatchSentWhileTheActorIsBusyCostsOneJobOnIt() async {
        var seen: [Int] = []
        let delivery = ActorDelivery<Int>(
            on: MainActor.shared, callbacks: EventCallbacks(next: { seen.append($0) }, error: nil, completed: nil))
        let sent = DispatchSemaphore(value: 0)
        Thread {
            for i in 0..<1_000 { delivery.receive(.next(i)) }  // the main actor is held by this test
            sent.signal()
        }.start()
        sent.wait()
        #expect(await eventually { seen.count == 1_000 })
        #expect(seen == Array(0..<1_000))
        #expect(delivery.jobsScheduled.load(ordering: .relaxed) == 1)  // not one Task per value
        delivery.dispose()
    }

    // Racy programs that Swift cannot reject statically, made safe by the hop:

    @Test func racyProgramLocalVarMutatedAfterDeliverOnBackgroundWhileTheMainActorMutatesItToo() async {
        let subject = Subject<Int>()
        var count = 0
        var done = false
        let subscription = subject.deliver(on: BackgroundScheduler())
            .subscribe(next: { _ in count += 1 }, completed: { done = true })  // hops back to the main actor
        Thread {
            for i in 0..<1_000 { subject.sendNext(i) }
            subject.sendCompleted()
        }.start()
        for _ in 0..<1_000 {
            count += 1  // the caller mutates it too, between suspensions
            await Task.yield()
        }
        #expect(await eventually { done })
        #expect(count == 2_000)  // no update lost: every mutation ran on the main actor
        subscription.dispose()
    }

    @Test func racyProgramMainActorFunctionSubscribingToIntervalOnASerialQueue() async {
        var ticks: [Int] = []
        var offMain = 0
        let subscription = Signal<Int>.interval(.milliseconds(1), on: SerialQueueScheduler(label: "ticks"))
            .take(20)
            .subscribeNext { tick in
                if !onMainQueue() { offMain += 1 }
                ticks.append(tick)
            }
        #expect(await eventually { ticks.count == 20 })
        #expect(ticks == Array(0..<20))
        #expect(offMain == 0)
        subscription.dispose()
    }

    @Test func racyProgramTaskDetachedSendingToASubjectAMainActorSubscriberObserves() async {
        let subject = ReplaySubject<String>(capacity: 10)
        var seen: [String] = []
        var offMain = 0
        let subscription = subject.subscribeNext { value in
            if !onMainQueue() { offMain += 1 }
            seen.append(value)
        }
        await Task.detached {
            for word in ["a", "b", "c"] { subject.sendNext(word) }
        }.value
        #expect(await eventually { seen.count == 3 })
        #expect(seen == ["a", "b", "c"])
        #expect(offMain == 0)
        subscription.dispose()
    }

    @Test func aTimeOperatorOnTheMainActorSchedulerDeliversThere() async {
        let subject = Subject<Int>()
        let arrivedOnMain = Flags()
        let subscription = record(subject.asSignal().delay(.milliseconds(5), on: MainActorScheduler.shared), into: arrivedOnMain)
        Thread { subject.sendNext(1); subject.sendNext(2) }.start()
        #expect(await eventually { arrivedOnMain.all.count == 2 })
        #expect(arrivedOnMain.all == [true, true])
        subscription.dispose()
    }

    @Test func anObservationWhoseSubjectIsFreedWithoutATerminalEventReleasesItsClosure() {
        final class Owner {}
        let owner = Owner()
        var subject: Subject<Int>? = Subject()
        var tracked: Tracked? = Tracked()
        weak let weakTracked = tracked
        subject!.observe(owner: owner) { [tracked] _, _ in withExtendedLifetime(tracked) {} }
        tracked = nil
        #expect(weakTracked != nil)  // alive while the subject may still send
        subject = nil  // no terminal event: the subject just goes away
        #expect(weakTracked == nil)  // the observation's closure held its own subscription: no cycle left
        withExtendedLifetime(owner) {}
    }

    @Test func afterAHopASendOnTheActorIsSynchronousAgain() async {
        let subject = Subject<Int>()
        var seen: [Int] = []
        let subscription = subject.subscribeNext { seen.append($0) }
        Thread { subject.sendNext(1) }.start()
        #expect(await eventually { seen == [1] })
        subject.sendNext(2)  // the drain is over: no hop
        #expect(seen == [1, 2])
        subscription.dispose()
    }

    @Test func aSubjectFreedWithValuesStillQueuedForTheActorDeliversThemThenReleasesTheClosure() async {
        var subject: Subject<Int>? = Subject()
        var tracked: Tracked? = Tracked()
        weak let weakTracked = tracked
        var seen: [Int] = []
        // The subscription is kept (as a view model keeps its own): only the delivery ending
        // can let the closure go.
        let subscription = subject!.subscribeNext { [tracked] value in withExtendedLifetime(tracked) {}; seen.append(value) }
        tracked = nil
        let sent = DispatchSemaphore(value: 0)
        DispatchQueue.global().async { [subject = subject!] in
            for i in 0..<100 { subject.sendNext(i) }  // queued: the main actor is held by this test
            sent.signal()
        }
        sent.wait()
        subject = nil  // no terminal event; the block's reference goes when the block does
        #expect(await eventually { seen.count == 100 })
        #expect(seen == Array(0..<100))
        #expect(await eventually { weakTracked == nil })  // released once the queue was delivered
        withExtendedLifetime(subscription) {}
    }

    @Test func aSendOnTheMainActorIsDeliveredSynchronously() {
        let subject = BehaviorSubject(0)
        var seen: [Int] = []
        let subscription = subject.subscribeNext { seen.append($0) }
        #expect(seen == [0])  // the replay, at once
        subject.sendNext(1)
        #expect(seen == [0, 1])  // no hop: same actor
        subscription.dispose()
    }

    @Test func observeOwnerOnTheMainActorRunsThereAndStopsWithTheOwner() async {
        final class Screen { var shown: [String] = [] }
        let subject = Subject<String>()
        var screen: Screen? = Screen()
        weak let weakScreen = screen
        subject.observe(owner: screen!) { screen, text in
            MainActor.assertIsolated()
            screen.shown.append(text)
        }
        Thread { subject.sendNext("a"); subject.sendNext("b") }.start()
        #expect(await eventually { weakScreen?.shown == ["a", "b"] })
        screen = nil
        #expect(weakScreen == nil)
    }

    @Test func disposingDropsWhatIsQueuedForTheActorAndReleasesTheClosuresAtOnce() async {
        let subject = Subject<Int>()
        var tracked: Tracked? = Tracked()
        weak let weakTracked = tracked
        var seen = 0
        let subscription = subject.subscribeNext { [tracked] _ in
            withExtendedLifetime(tracked) { seen += 1 }
        }
        tracked = nil
        // The main actor is busy with this test until it suspends: these values must queue.
        let sent = DispatchSemaphore(value: 0)
        Thread {
            for i in 0..<100 { subject.sendNext(i) }
            sent.signal()
        }.start()
        sent.wait()
        subscription.dispose()
        #expect(weakTracked == nil)  // released by dispose, not by the drain
        try? await Task.sleep(for: .milliseconds(50))
        #expect(seen == 0)
    }

    @Test func mainActorSchedulerRunsActionsOnTheMainActorInOrder() async {
        let order = Locked<[Int]>([])
        let offMain = Atomic<Int>(0)
        Thread {
            for i in 0..<500 {
                MainActorScheduler.shared.schedule {
                    if !onMainQueue() { offMain.add(1, ordering: .relaxed) }
                    order.withLock { $0.append(i) }
                }
            }
        }.start()
        #expect(await eventually { order.withLock { $0.count } == 500 })
        #expect(order.withLock { $0 } == Array(0..<500))
        #expect(offMain.load(ordering: .relaxed) == 0)
    }
}

/// An actor that subscribes from its own methods: its state is mutated only on it.
actor Tally {
    var values: [Int] = []
    var terminals = 0
    var offActor = 0
    private var subscription: (any Disposable)?

    func bind(_ signal: Signal<Int>) {
        subscription = signal.subscribe(
            next: { value in
                if !isCurrentlyIsolated(to: self) { self.offActor += 1 }
                self.values.append(value)
            },
            error: { _ in self.terminals += 1 },
            completed: { self.terminals += 1 })
    }

    func snapshot() -> (values: [Int], terminals: Int, offActor: Int) { (values, terminals, offActor) }
}

@Suite struct ActorIsolatedDeliveryTests {
    @Test func anActorsSubscriptionFedFromManyThreadsGetsEveryValueOnceInEachSendersOrderThenOneTerminal() async {
        let subject = Subject<Int>()
        let tally = Tally()
        await tally.bind(subject.asSignal())
        let threads = 4, perThread = 1_000
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            Thread {
                DispatchQueue.concurrentPerform(iterations: threads) { thread in
                    for i in 0..<perThread { subject.sendNext(thread * perThread + i) }
                }
                subject.sendCompleted()
                subject.sendError(CancellationError())  // ignored: after the terminal
                done.resume()
            }.start()
        }
        #expect(await eventually { await tally.snapshot().terminals == 1 })
        let (values, terminals, offActor) = await tally.snapshot()
        #expect(terminals == 1)
        #expect(offActor == 0)
        #expect(values.sorted() == Array(0..<threads * perThread))
        for thread in 0..<threads {
            let mine = values.filter { $0 / perThread == thread }
            #expect(mine == mine.sorted(), "sender \(thread)'s values out of order")
        }
    }

    @Test func anActorHoldingItsEndedSubscriptionIsFreed() async {
        let subject = Subject<Int>()
        var tally: Tally? = Tally()
        weak let weakTally = tally
        await tally!.bind(subject.asSignal())  // the actor holds the subscription, whose callbacks hold the actor
        Thread { subject.sendNext(1); subject.sendCompleted() }.start()
        #expect(await eventually { await weakTally?.snapshot().terminals == 1 })
        tally = nil
        #expect(await eventually { weakTally == nil })  // the delivery held the actor only weakly
    }

    @Test func whenTheActorIsGoneTheNextEventDisposesTheUpstreamSubscription() async {
        actor Watcher {
            private var subscription: (any Disposable)?
            func watch(_ signal: Signal<Int>) { subscription = signal.subscribeNext { [weak self] _ in _ = self } }
        }
        let upstreamDisposed = Atomic<Int>(0)
        let input = Locked<PassthroughSubscriber<Int>?>(nil)
        let signal = Signal<Int> { subscriber in
            input.withLock { $0 = subscriber }
            return ActionDisposable { upstreamDisposed.add(1, ordering: .relaxed) }
        }
        var watcher: Watcher? = Watcher()
        await watcher!.watch(signal)
        watcher = nil  // freed, never disposed: its subscription is only dropped
        let sender = input.withLock { $0 }!
        let sent = DispatchSemaphore(value: 0)
        Thread { sender.sendNext(1); sent.signal() }.start()
        sent.wait()
        #expect(upstreamDisposed.load(ordering: .relaxed) == 1)  // not left in the source's list forever
        input.withLock { $0 = nil }
    }

    @Test func actorSchedulerRunsActionsOnTheActorInTheOrderScheduled() async {
        let tally = Tally()
        let scheduler = ActorScheduler(tally)
        let order = Locked<[Int]>([])
        let offActor = Atomic<Int>(0)
        for i in 0..<1_000 {
            scheduler.schedule {
                if !scheduler.isCurrent { offActor.add(1, ordering: .relaxed) }
                order.withLock { $0.append(i) }
            }
        }
        #expect(await eventually { order.withLock { $0.count } == 1_000 })
        #expect(order.withLock { $0 } == Array(0..<1_000))
        #expect(offActor.load(ordering: .relaxed) == 0)
        #expect(!scheduler.isCurrent)
    }

    @Test func actorSchedulerCancelsADelayedActionAndReleasesItOnDispose() async {
        final class Tracked: Sendable {}
        let scheduler = ActorScheduler(Tally())
        let ran = Atomic<Int>(0)
        var tracked: Tracked? = Tracked()
        weak let weakTracked = tracked
        let pending = scheduler.schedule(after: .milliseconds(50)) { [tracked] in
            withExtendedLifetime(tracked) {}; ran.add(1, ordering: .relaxed)
        }
        tracked = nil
        pending.dispose()
        #expect(weakTracked == nil)
        try? await Task.sleep(for: .milliseconds(150))
        #expect(ran.load(ordering: .relaxed) == 0)
        let later = Atomic<Int>(0)
        scheduler.schedule(after: .milliseconds(10)) { later.add(1, ordering: .relaxed) }
        #expect(await eventually { later.load(ordering: .relaxed) == 1 })
    }

    @Test func deliverOnAnActorSchedulerWithATinyBufferNeverBlocksSendersOnSwiftsPool() async {
        // An actor has no thread of its own: senders blocked on Swift's pool (2 threads here)
        // waiting for room would leave none to run the drain. `.wait` must not block for it.
        let tally = Tally()
        let subject = Subject<Int>()
        let received = Atomic<Int>(0)
        let subscription = subject.deliver(on: ActorScheduler(tally), bufferSize: 1)
            .subscribeNext { _ in received.add(1, ordering: .relaxed) }
        await withTaskGroup(of: Void.self) { group in
            for sender in 0..<3 {
                group.addTask { for i in 0..<200 { subject.sendNext(sender * 1_000 + i) } }
            }
        }
        #expect(await eventually { received.load(ordering: .relaxed) == 600 })
        subscription.dispose()
    }

    @Test func observeOwnerOnAnActorSchedulerDeliversOnThatActorInOrder() async {
        final class Owner: Sendable {}
        let owner = Owner()
        let tally = Tally()
        let scheduler = ActorScheduler(tally)
        let subject = Subject<Int>()
        let received = Locked<[Int]>([])
        let offActor = Atomic<Int>(0)
        let observation = observe(subject, owner: owner, on: scheduler) { value in
            if !scheduler.isCurrent { offActor.add(1, ordering: .relaxed) }
            received.withLock { $0.append(value) }
        }
        Thread { for i in 0..<300 { subject.sendNext(i) } }.start()
        #expect(await eventually { received.withLock { $0.count } == 300 })
        #expect(received.withLock { $0 } == Array(0..<300))
        #expect(offActor.load(ordering: .relaxed) == 0)
        observation.dispose()
        withExtendedLifetime(owner) {}
    }

    @Test func deliverOnAnActorSchedulerKeepsOrder() async {
        let tally = Tally()
        let received = Locked<[Int]>([])
        let completed = Atomic<Int>(0)
        let subscription = Signal.from(0..<500).deliver(on: ActorScheduler(tally))
            .subscribe(next: { v in received.withLock { $0.append(v) } }, completed: { completed.add(1, ordering: .relaxed) })
        #expect(await eventually { completed.load(ordering: .relaxed) == 1 })
        #expect(received.withLock { $0 } == Array(0..<500))
        subscription.dispose()
    }
}
