import Dispatch
import Synchronization
import Testing
@testable import Ripple
import RippleTestSupport

/// `Signal.interval` keeps ticking whatever the order in which its threads run.
@Suite(.leakChecked) struct IntervalTests {
    /// A scheduler on which the first tick runs — and schedules the second — before
    /// `schedule(after:)` returns to the subscribing thread: what a subscribing thread preempted
    /// for longer than the period sees. Later actions run on a serial queue, as usual.
    final class FirstActionRunsBeforeReturning: Scheduler, @unchecked Sendable {  // `first` is atomic; the queue is thread-safe
        let queue = SerialQueueScheduler(label: "interval-ticks")
        let first = Atomic<Bool>(true)

        func schedule(_ action: @escaping @Sendable () -> Void) -> any Disposable {
            queue.schedule(action)
        }

        func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> any Disposable {
            guard first.exchange(false, ordering: .relaxed) else { return queue.schedule(after: delay, action) }
            let ran = DispatchSemaphore(value: 0)
            let disposable = queue.schedule(after: delay) {
                action()
                ran.signal()
            }
            ran.wait()
            return disposable
        }
    }

    @Test func anIntervalWhoseFirstTickRunsBeforeItsSchedulingReturnsKeepsTicking() async {
        let ticks = Box<[Int]>([])
        let subscription = Signal<Int>.interval(.milliseconds(1), on: FirstActionRunsBeforeReturning())
            .take(5)
            .subscribe(isolation: nil, next: { tick in ticks.mutate { $0.append(tick) } })
        #expect(await eventually { ticks.value.count == 5 }, "the interval stopped after \(ticks.value)")
        #expect(ticks.value == [0, 1, 2, 3, 4])
        subscription.dispose()
    }
}
