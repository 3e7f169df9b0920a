import Foundation
import Synchronization
import Testing
@testable import Ripple
import RippleTestSupport

/// What must survive when a pipeline of synchronous operators stops paying one delivery turn
/// per stage (cold-path fusion, see the DeliveryTurn article): serialization wherever a sender
/// is not already serialized, the grammar, re-entrancy, disposal from any thread and from inside
/// a callback, the release of closures, and deep chains.
@Suite(.leakChecked, .offThePool) struct ColdPathFusionTests {
    /// The operators of the cold-pipeline benchmark and their kin, none of which changes a
    /// value's identity: `values` must arrive exactly once each.
    static func stages(_ signal: Signal<Int>) -> Signal<Int> {
        signal.map { $0 }.filter { _ in true }.compactMap { Optional($0) }.onNext { _ in }.skip(while: { _ in false })
    }

    @Test func concurrentSendersIntoAUserSignalStillReachThePipelineOneAtATime() {
        let threads = 4, perThread = 2_000
        let feed = Box<PassthroughSubscriber<Int>?>(nil)
        let source = Signal<Int> { subscriber in
            feed.mutate { $0 = subscriber }
            return nil
        }
        let recorder = CompletenessRecorder()
        let subscription = Self.stages(source).subscribe(next: { recorder.next($0) }, completed: { recorder.terminal() })
        let input = feed.value!
        runConcurrently(threads: threads) { thread in
            for value in 0..<perThread { input.sendNext(thread * perThread + value) }
        }
        input.sendCompleted()
        recorder.expectComplete(sent: (0..<threads).map { thread in (0..<perThread).map { thread * perThread + $0 } }, terminated: true)
        subscription.dispose()
        feed.mutate { $0 = nil }
    }

    @Test func concurrentSendersIntoASubjectStillReachThePipelineOneAtATime() {
        let threads = 4, perThread = 2_000
        let subject = Subject<Int>()
        let recorder = CompletenessRecorder()
        let subscription = Self.stages(subject.asSignal()).subscribe(next: { recorder.next($0) }, completed: { recorder.terminal() })
        runConcurrently(threads: threads) { thread in
            for value in 0..<perThread { subject.sendNext(thread * perThread + value) }
        }
        subject.sendCompleted()
        recorder.expectComplete(sent: (0..<threads).map { thread in (0..<perThread).map { thread * perThread + $0 } }, terminated: true)
        subscription.dispose()
    }

    /// A `Subscriber` the user made may be sent to from elsewhere too: subscribed to a pipeline
    /// it keeps its own turn, so the pipeline's values and the other thread's never overlap.
    @Test func aUserSubscriberOnAPipelineStillSerializesItsOtherSenders() {
        let overlap = OverlapDetector()
        let count = Atomic<Int>(0)
        let subscriber = Subscriber<Int>(next: { _ in
            overlap.enter()
            count.add(1, ordering: .relaxed)
            overlap.leave()
        })
        let perSide = 20_000
        runConcurrently(threads: 2) { thread in
            if thread == 0 {
                Self.stages(Signal.from(0..<perSide)).subscribe(subscriber)  // completes: later sends are ignored
            } else {
                for value in 0..<perSide { subscriber.sendNext(value) }
            }
        }
        #expect(overlap.overlapCount == 0)
        #expect(count.load(ordering: .relaxed) >= perSide)
        subscriber.dispose()
    }

    /// A conformer of its own gets the default `makeSubscription`'s `Subscriber` and may hand it
    /// to a pipeline *and* send to it from another thread: that subscriber keeps its turn.
    @Test func theDefaultSubscriptionOfAConformerOfItsOwnKeepsItsTurn() {
        struct Split: SignalProtocol {
            typealias Value = Int
            let perSide: Int
            func subscribe(_ subscriber: any SubscriberProtocol<Int>) -> any Disposable {
                let box = UncheckedBox(subscriber)
                let perSide = perSide
                let other = Thread { for value in 0..<perSide { box.value.sendNext(value) } }
                other.start()
                let subscription = ColdPathFusionTests.stages(Signal.from(0..<perSide).concat(Signal<Int>.never)).subscribe(subscriber)
                while !other.isFinished { usleep(100) }
                return subscription
            }
        }
        let overlap = OverlapDetector()
        let count = Atomic<Int>(0)
        let subscription = Split(perSide: 20_000).subscribe(next: { _ in
            overlap.enter()
            count.add(1, ordering: .relaxed)
            overlap.leave()
        })
        #expect(overlap.overlapCount == 0)
        #expect(count.load(ordering: .relaxed) == 40_000)
        subscription.dispose()
    }

    /// A callback at the end of a pipeline that sends back into its source subject: the send is
    /// delivered after the callback returns, to every subscriber in send order.
    @Test func aCallbackSendingBackIntoTheSourceIsDeliveredAfterItReturnsInOrder() {
        let subject = Subject<Int>()
        var log: [String] = []
        var other: [Int] = []
        let first = subject.map { $0 }.filter { _ in true }.scan(0) { _, value in value }.subscribeNext { value in
            log.append("begin \(value)")
            if value < 3 { subject.sendNext(value + 1) }
            log.append("end \(value)")
        }
        let second = subject.subscribeNext { other.append($0) }
        subject.sendNext(0)
        #expect(log == ["begin 0", "end 0", "begin 1", "end 1", "begin 2", "end 2", "begin 3", "end 3"])
        #expect(other == [0, 1, 2, 3])
        first.dispose()
        second.dispose()
    }

    /// A callback that subscribes to the same cold pipeline again gets a subscription of its own,
    /// run to the end inside the callback; the outer one goes on afterwards.
    @Test func aCallbackSubscribingToTheSamePipelineAgainRunsItsOwnSubscription() {
        let pipeline = Self.stages(Signal.from([1, 2]))
        var log: [String] = []
        pipeline.subscribe(next: { outer in
            log.append("outer \(outer)")
            if outer == 1 { pipeline.subscribe(next: { log.append("inner \($0)") }, completed: { log.append("inner done") }) }
        }, completed: { log.append("outer done") })
        #expect(log == ["outer 1", "inner 1", "inner 2", "inner done", "outer 2", "outer done"])
    }

    @Test func disposingFromInsideACallbackStopsDeliveryAndReleasesTheClosures() {
        final class Owner {}
        weak var weakOwner: Owner?
        let subject = Subject<Int>()
        var seen: [Int] = []
        let subscription = Box<(any Disposable)?>(nil)
        do {
            let owner = Owner()
            weakOwner = owner
            subscription.mutate {
                $0 = Self.stages(subject.asSignal()).scan(0, &+).subscribeNext { value in
                    _ = owner
                    seen.append(value)
                    if value == 3 { subscription.value?.dispose() }
                }
            }
        }
        for value in 1...5 { subject.sendNext(value) }
        #expect(seen == [1, 3])
        #expect(weakOwner == nil)
        #expect(subject.storage.subscriberCount == 0)
        subscription.mutate { $0 = nil }
    }

    @Test func disposingReleasesTheClosuresAtOnceAndATerminalEventToo() {
        final class Owner {}
        weak var disposedOwner: Owner?
        weak var completedOwner: Owner?
        let subject = Subject<Int>()
        let subscription: any Disposable
        do {
            let owner = Owner()
            disposedOwner = owner
            subscription = Self.stages(subject.asSignal()).subscribeNext { _ in _ = owner }
        }
        subject.sendNext(1)
        #expect(disposedOwner != nil)
        subscription.dispose()
        #expect(disposedOwner == nil)
        do {
            let owner = Owner()
            completedOwner = owner
            Self.stages(Signal.from([1, 2])).subscribe(completed: { _ = owner })
        }
        #expect(completedOwner == nil)
    }

    /// `take` inside a pipeline ends it: one completion, nothing after it. (The cold source
    /// stops too: `lift` links each upstream compound before its producer runs, see
    /// `takeStopsAColdSourceBehindAMap`.)
    @Test func anOperatorEndingThePipelineEndsItOnce() {
        var seen: [Int] = []
        var completions = 0
        Signal.from(0..<10_000).map { $0 }.filter { _ in true }
            .take(3).scan(0, &+)
            .subscribe(next: { seen.append($0) }, completed: { completions += 1 })
        #expect(seen == [0, 1, 3])
        #expect(completions == 1)
    }

    /// The grammar inside the pipeline: an error from a stage ends it once, nothing follows.
    @Test func anErrorFromAStageEndsThePipelineExactlyOnce() {
        var events: [String] = []
        Signal.from(0..<10).tryMap { value -> Int in
            if value == 2 { throw TestError() }
            return value
        }.filter { _ in true }.subscribe(next: { events.append("\($0)") }, error: { _ in events.append("error") },
                                          completed: { events.append("completed") })
        #expect(events == ["0", "1", "error"])
    }

    /// Another thread disposes while a producer feeds the pipeline: no callback after the
    /// producer saw the disposal, no crash, and everything is released once the producer returns.
    @Test func disposingFromAnotherThreadDuringDeliveryIsSafe() {
        final class Owner: @unchecked Sendable {}
        for round in 0..<20 {
            weak var weakOwner: Owner?
            let started = Atomic<Bool>(false)
            let delivered = Atomic<Int>(0)
            let subscription = Box<(any Disposable)?>(nil)
            let producerReturned = Atomic<Bool>(false)
            let source = Signal<Int> { subscriber in
                var value = 0
                while !subscriber.isDisposed {
                    subscriber.sendNext(value)
                    value += 1
                }
                subscriber.sendCompleted()  // ignored: disposed
                producerReturned.store(true, ordering: .releasing)
                return nil
            }
            do {
                let owner = Owner()
                weakOwner = owner
                let pipeline = Self.stages(source.subscribe(on: BackgroundScheduler(qos: .userInitiated))).scan(0, &+)
                subscription.mutate {
                    $0 = pipeline.subscribe(next: { _ in
                        _ = owner
                        started.store(true, ordering: .releasing)
                        delivered.add(1, ordering: .relaxed)
                    }, completed: { Issue.record("round \(round): completed after dispose") })
                }
            }
            #expect(waitUntil { started.load(ordering: .acquiring) })
            subscription.value?.dispose()
            let afterDispose = delivered.load(ordering: .relaxed)
            #expect(waitUntil { producerReturned.load(ordering: .acquiring) }, "round \(round): the producer never saw the disposal")
            #expect(waitUntil { weakOwner == nil }, "round \(round): the closures were never released")
            #expect(delivered.load(ordering: .relaxed) <= afterDispose + 1)  // at most the one in flight
            subscription.mutate { $0 = nil }
        }
    }

    @Test func aChainOf100kFilterStagesOnAColdSourceDeliversCompletesAndReleases() {
        let baseline = liveSubscriptionsInThisTest
        let depth = Workload.size(100_000)
        var values: [Int] = []
        var completions = 0
        do {
            var signal = Signal.from([1, 2, 3])
            for level in 0..<depth { signal = level % 2 == 0 ? signal.filter { _ in true } : signal.scan(0) { _, value in value } }
            signal.subscribe(next: { values.append($0) }, completed: { completions += 1 })
        }
        #expect(values == [1, 2, 3])
        #expect(completions == 1)
        #expect(liveSubscriptionsInThisTest == baseline)
    }

    /// Fusion is sound only while its one rule holds (one sender, one event at a time, never
    /// from inside its own callbacks). Debug builds check it: a fused subscriber re-entered from
    /// its own callback stops with a message naming the rule, instead of overlapping callbacks.
    @Test func aFusedSubscriberReenteredFromItsOwnCallbackStopsWithAMessage() async {
        #if DEBUG
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let inner = Box<Subscriber<Int>?>(nil)
            let subscriber = Subscriber<Int>(next: { value in
                if value == 1 { inner.value?.sendNext(2) }
            })
            subscriber.upstreamSerializes = true
            inner.mutate { $0 = subscriber }
            subscriber.sendNext(1)
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("two deliveries overlapped in a fused subscriber"))
        #endif
    }

    @Test func aDeepChainOnASubjectDisposedFromItsDeepestCallbackStops() {
        let baseline = liveSubscriptionsInThisTest
        let depth = Workload.size(100_000)
        do {
            let subject = Subject<Int>()
            var signal = subject.map { $0 }
            for _ in 0..<depth { signal = signal.map { $0 + 1 } }
            var seen: [Int] = []
            let subscription = Box<(any Disposable)?>(nil)
            subscription.mutate {
                $0 = signal.subscribeNext { value in
                    seen.append(value)
                    subscription.value?.dispose()
                }
            }
            subject.sendNext(0)
            subject.sendNext(1)
            #expect(seen == [depth])
            #expect(subject.storage.subscriberCount == 0)
            subscription.mutate { $0 = nil }
        }
        #expect(liveSubscriptionsInThisTest == baseline)
    }
}

/// Hands a value to a thread the test synchronizes itself.
private final class UncheckedBox<T>: @unchecked Sendable {  // the test joins the thread before reading anything it wrote
    let value: T
    init(_ value: T) { self.value = value }
}

/// Deep chains of user operators and of library operators wrapped around a fused `map`.
extension ColdPathFusionTests {
    static let depth = Workload.size(100_000)

    /// A custom operator written the usual way — `Signal { }` around a library pipeline,
    /// subscribed with `subscribe(next:)` — applied 100,000 times by a loop. Every level's
    /// `subscribe(next:)` subscriber is fused behind its `map` (depth 0: no stack check), and the
    /// `map`'s relay, on a user signal, is at depth 1 (no check either): delivery must still
    /// move to a fresh stack somewhere instead of overflowing.
    @Test func aChainOf100kUserOperatorsWrappingAMapDelivers() {
        let feed = Box<PassthroughSubscriber<Int>?>(nil)
        var signal = Signal<Int> { subscriber in
            feed.mutate { $0 = subscriber }
            return nil
        }
        for _ in 0..<Self.depth {
            let upstream = signal
            signal = Signal<Int> { subscriber in
                upstream.map { $0 + 1 }.subscribe(
                    next: { subscriber.sendNext($0) }, error: { subscriber.sendError($0) },
                    completed: { subscriber.sendCompleted() })
            }
        }
        let recorder = Recorder<Int>()
        let subscription = signal.subscribe(recorder)
        feed.value?.sendNext(0)
        feed.value?.sendCompleted()
        #expect(recorder.events == [.next(Self.depth), .completed])
        subscription.dispose()
        feed.mutate { $0 = nil }
    }

    /// The same with library operators only: `map` then `take(until:)`, 100,000 times.
    @Test func aChainOf100kMapsEachBehindTakeUntilDelivers() {
        let subject = Subject<Int>()
        var signal = subject.asSignal()
        for _ in 0..<Self.depth { signal = signal.map { $0 + 1 }.take(until: Signal<Int>.never) }
        let recorder = Recorder<Int>()
        let subscription = signal.subscribe(recorder)
        subject.sendNext(0)
        subject.sendCompleted()
        #expect(recorder.events == [.next(Self.depth), .completed])
        subscription.dispose()
    }
}

/// A sequence of `limit` elements that counts how many were pulled.
private struct CountingSequence: Sequence, Sendable {
    let limit: Int
    let pulled: Counter
    struct Iterator: IteratorProtocol {
        var current = 0
        let limit: Int
        let pulled: Counter
        mutating func next() -> Int? {
            guard current < limit else { return nil }
            pulled.pulled.add(1, ordering: .relaxed)
            defer { current += 1 }
            return current
        }
    }
    func makeIterator() -> Iterator { Iterator(limit: limit, pulled: pulled) }
}

private final class Counter: Sendable {
    let pulled = Atomic<Int>(0)
}

/// Whether a cold source stops once the pipeline it feeds has ended (the guarantee: `Signal.from`
/// over a huge range stops within an element once the subscription ends): the compound that a stage's
/// completion or disposal disposes holds the subscription upstream of it before a synchronous
/// source runs (`lift`, and every operator that subscribes inside its own subscribe closure).
extension ColdPathFusionTests {
    @Test func takeStopsAColdSourceBehindAMap() {
        let counter = Counter()
        var seen: [Int] = []
        Signal.from(CountingSequence(limit: 1_000_000, pulled: counter)).map { $0 }.take(3)
            .subscribe(next: { seen.append($0) })
        #expect(seen == [0, 1, 2])
        #expect(counter.pulled.load(ordering: .relaxed) <= 4, "the source ran on after take completed")
    }

    @Test func takeStopsAColdSourceDirectly() {
        let counter = Counter()
        var seen: [Int] = []
        Signal.from(CountingSequence(limit: 1_000_000, pulled: counter)).take(3)
            .subscribe(next: { seen.append($0) })
        #expect(seen == [0, 1, 2])
        #expect(counter.pulled.load(ordering: .relaxed) <= 4, "the source ran on after take completed")
    }

    @Test func takeStopsAProducerThatChecksIsDisposed() {
        let produced = Box(0)
        let source = Signal<Int> { subscriber in
            var value = 0
            while !subscriber.isDisposed && value < 1_000_000 {
                subscriber.sendNext(value)
                value += 1
            }
            produced.mutate { $0 = value }
            return nil
        }
        var seen: [Int] = []
        source.map { $0 }.take(3).subscribe(next: { seen.append($0) })
        #expect(seen == [0, 1, 2])
        #expect(produced.value <= 4, "the producer ran on after take completed")
    }

    @Test func disposingFromAnotherThreadStopsAColdSourceBehindAMap() {
        let counter = Counter()
        let total = 20_000_000
        let finished = Atomic<Bool>(false)
        let started = Atomic<Bool>(false)
        let subscription = Signal.from(CountingSequence(limit: total, pulled: counter)).map { $0 }
            .onCompleted { finished.store(true, ordering: .releasing) }
            .subscribe(on: BackgroundScheduler(qos: .userInitiated))
            .subscribe(next: { _ in started.store(true, ordering: .releasing) })
        #expect(waitUntil { started.load(ordering: .acquiring) })
        subscription.dispose()
        let atDispose = counter.pulled.load(ordering: .relaxed)
        // Give the loop time to notice (it checks before every element), then look.
        usleep(500_000)
        let later = counter.pulled.load(ordering: .relaxed)
        // `subscribe(on:)` links the upstream subscription into its own before the `onCompleted`
        // signal's producer runs (as `lift` does for `onCompleted` and `map`), so this dispose
        // reaches the relay whose status the source's loop checks.
        #expect(later - atDispose < 1_000, "the source pulled \(later - atDispose) more elements after dispose")
        let ranToItsEnd = finished.load(ordering: .acquiring)
        #expect(!ranToItsEnd, "the source ran to its end")
    }
}

extension ColdPathFusionTests {
    /// A conformer of its own that keeps what it was handed (say, until its next event, as a
    /// delegate list that prunes lazily) and returns a disposable that does not dispose it. Fused
    /// behind `map`, the `subscribe(next:)` subscriber leaves its closures to the relay, which
    /// that disposable never reaches: disposing the subscription must still release them.
    @Test func disposingAPipelineOnAConformerThatKeepsItsSubscriberReleasesTheClosures() {
        final class Keeper: SignalProtocol, @unchecked Sendable {  // used on one thread
            typealias Value = Int
            var kept: [any SubscriberProtocol<Int>] = []
            func subscribe(_ subscriber: any SubscriberProtocol<Int>) -> any Disposable {
                kept.append(subscriber)
                return ActionDisposable {}
            }
        }
        final class Owner {}
        weak var weakOwner: Owner?
        let keeper = Keeper()
        let subscription: any Disposable
        do {
            let owner = Owner()
            weakOwner = owner
            subscription = keeper.map { $0 }.subscribe(next: { _ in _ = owner })
        }
        keeper.kept.first?.sendNext(1)
        #expect(weakOwner != nil)
        subscription.dispose()
        #expect(weakOwner == nil, "the closures outlive the disposed subscription")
        keeper.kept.removeAll()
    }
}
