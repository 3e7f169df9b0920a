import Foundation
import Synchronization
import Testing
@testable import Ripple
import RippleTestSupport

/// Review of issue 19's cold-path fusion: shapes the fusion tests did not cover.
@Suite(.leakChecked) struct FusionReviewTests {
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
