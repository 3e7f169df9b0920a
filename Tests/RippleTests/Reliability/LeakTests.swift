import Foundation
import Testing
import Ripple
import RippleTestSupport

/// Each scenario runs in a process of its own (an exit test), so `RippleDebug`'s global
/// counter is not disturbed by tests running in parallel; the process fails if any
/// subscription outlives the scenario.
@Suite(.leakChecked) struct LeakTests {
    @Test func subjectSubscriptionsAreFreedAfterDisposeCompletionAndOwnerRelease() async {
        await #expect(processExitsWith: .success) {
            let baseline = RippleDebug.liveSubscriptions
            do {
                final class Owner {}
                let subject = Subject<Int>(), behavior = BehaviorSubject(0), replay = ReplaySubject<Int>(capacity: 3)
                let disposables = [subject.subscribeNext { _ in }, behavior.subscribeNext { _ in }, replay.subscribeNext { _ in }]
                disposables.forEach { $0.dispose() }
                behavior.subscribe(next: { _ in }, completed: {})
                behavior.sendCompleted()
                var owner: Owner? = Owner()
                subject.observe(owner: owner!) { _, _ in }
                subject.observeOnce { _ in }
                subject.sendNext(1)
                owner = nil
                subject.sendNext(2)
                replay.subscribe(Subscriber<Int>(next: { _ in }))
                if RippleDebug.liveSubscriptions <= baseline { exit(3) }  // the counter does count
            }
            if RippleDebug.liveSubscriptions != baseline { exit(1) }
        }
    }

    @Test func operatorPipelinesAreFreedAfterTheyEndOrAreDisposed() async {
        await #expect(processExitsWith: .success) {
            let baseline = RippleDebug.liveSubscriptions
            do {
                let clock = TestScheduler()
                let subject = Subject<Int>()
                Signal.from(0..<100).map { $0 * 2 }.filter { $0 > 10 }.scan(0, +).subscribe()
                let flat = subject.flatMap { Signal.just($0).delay(.milliseconds(5), on: clock) }.subscribeNext { _ in }
                let latest = subject.combineLatest(BehaviorSubject(1)).subscribeNext { _ in }
                let shared = subject.share()
                let a = shared.subscribeNext { _ in }, b = shared.subscribeNext { _ in }
                let delivered = subject.deliver(on: clock).take(until: Signal<Int>.timer(.milliseconds(50), on: clock))
                    .subscribeNext { _ in }
                subject.sendNext(1)
                clock.advance(by: .milliseconds(10))
                [flat, latest, a, b].forEach { $0.dispose() }
                clock.run()
                _ = delivered
                Signal<Int>.never.timeout(.seconds(1), on: clock).subscribe()
                clock.run()
            }
            if RippleDebug.liveSubscriptions != baseline { exit(1) }
        }
    }

    @Test func disposedScheduledWorkReleasesWhatItCaptured() async {
        await #expect(processExitsWith: .success) {
            final class Payload {}
            weak var weakPayload: Payload?
            let clock = TestScheduler()
            do {
                let payload = Payload()
                weakPayload = payload
                let d = Signal.just(1).delay(.seconds(1), on: clock).subscribeNext { _ in _ = payload }
                d.dispose()
            }
            // Disposing cancelled the timer and released its closure at once: nothing runs,
            // and the payload is gone before the clock moves.
            if weakPayload != nil { exit(1) }
            clock.run()
            if weakPayload != nil { exit(2) }
        }
    }
}

@Suite(.leakChecked) struct ResourceLimitTests {
    @Test func aMillionSubscribersOnOneSubjectAllReceiveAndLeave() async {
        await #expect(processExitsWith: .success) {
            let baseline = RippleDebug.liveSubscriptions
            do {
                final class Counter { var total = 0 }
                let counter = Counter()
                let subject = Subject<Int>()
                let million = Workload.size(1_000_000)
                var disposables = (0..<million).map { _ in subject.subscribeNext { counter.total &+= $0 } }
                subject.sendNext(1)
                if counter.total != million { exit(2) }
                for index in stride(from: 0, to: disposables.count, by: 2) { disposables[index].dispose() }
                subject.sendNext(1)
                if counter.total != million + million / 2 { exit(3) }
                disposables.removeAll()
                subject.sendCompleted()
            }
            if RippleDebug.liveSubscriptions != baseline { exit(1) }
        }
    }
}
