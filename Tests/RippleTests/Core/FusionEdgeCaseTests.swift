import Foundation
import Synchronization
import Testing
@testable import Ripple
import RippleTestSupport

/// Edge cases of cold-path fusion: shapes `ColdPathFusionTests` does not cover.
@Suite(.leakChecked, .offThePool) struct FusionEdgeCaseTests {
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
extension FusionEdgeCaseTests {
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

extension FusionEdgeCaseTests {
    /// A conformer of its own that keeps what it was handed (say, until its next event, as a
    /// delegate list that prunes lazily) and returns a disposable that does not dispose it.
    /// Before fusion the `subscribe(next:)` subscriber released the closures when disposed; fused
    /// behind `map`, it leaves them to the relay, which nothing disposes.
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
