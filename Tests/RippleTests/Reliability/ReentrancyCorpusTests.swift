import Foundation
import Synchronization
import Testing
@testable import Ripple
import RippleTestSupport

/// Every kind of user code Ripple runs — callbacks, `==`, a value's `deinit`, a scheduler's
/// `now` and `schedule` — re-entering the same subject: nothing deadlocks, nothing is lost.
///
/// Each case runs under the watchdog: user code called under one of Ripple's locks would
/// deadlock (the locks are not recursive) and fail here instead of hanging.
@Suite(.leakChecked, .offThePool) struct ReentrancyCorpusTests {
    /// A payload whose `deinit` runs `onDeinit` (user code run wherever the value dies).
    final class Payload: @unchecked Sendable {  // onDeinit is set once, before sharing
        let id: Int
        var onDeinit: (@Sendable () -> Void)?
        init(_ id: Int) { self.id = id }
        deinit { onDeinit?() }
    }

    @Test func aReplacedBehaviorValueWhoseDeinitReadsAndSendsToTheSameSubject() {
        let subject = BehaviorSubject(Payload(0))
        let seen = Box<[Int]>([])
        let subscription = subject.subscribeNext { payload in seen.mutate { $0.append(payload.id) } }
        let finished = finishes("a send whose replaced value re-enters the subject") {
            let first = Payload(1)
            first.onDeinit = { [weak subject] in
                guard let subject else { return }
                _ = subject.value            // reads under the subject's lock: must not be held
                subject.sendNext(Payload(3))
            }
            subject.sendNext(first)
            subject.sendNext(Payload(2))  // replaces `first`: its deinit sends 3
        }
        #expect(finished)
        #expect(seen.value == [0, 1, 2, 3])
        subscription.dispose()
    }

    @Test func anEvictedReplayValueWhoseDeinitSendsToTheSameSubject() {
        let subject = ReplaySubject<Payload>(capacity: 1)
        let seen = Box<[Int]>([])
        let subscription = subject.subscribeNext { payload in seen.mutate { $0.append(payload.id) } }
        let finished = finishes("a send whose evicted value re-enters the subject") {
            let first = Payload(1)
            first.onDeinit = { [weak subject] in subject?.sendNext(Payload(3)) }
            subject.sendNext(first)
            subject.sendNext(Payload(2))  // evicts `first`
        }
        #expect(finished)
        #expect(seen.value == [1, 2, 3])
        subscription.dispose()
    }

    @Test func anExpiredReplayValueWhoseDeinitSubscribesToTheSameSubject() {
        let scheduler = TestScheduler()
        let subject = ReplaySubject<Payload>(capacity: 10, maxAge: .seconds(1), scheduler: scheduler)
        let lateJoiner = Box<[Int]>([])
        let finished = finishes("a replay whose expired value re-enters the subject") {
            let old = Payload(1)
            old.onDeinit = { [weak subject] in
                guard let subject else { return }
                _ = subject.retainedCount
                subject.subscribeNext { payload in lateJoiner.mutate { $0.append(payload.id) } }.dispose()
            }
            subject.sendNext(old)
            scheduler.advance(by: .seconds(2))
            subject.sendNext(Payload(2))  // expires `old`
            #expect(subject.retainedCount == 1)
        }
        #expect(finished)
        #expect(lateJoiner.value == [2])
    }

    /// A scheduler whose clock re-enters the subject it timestamps.
    final class ReenteringClock: Scheduler, @unchecked Sendable {  // `onNow` is set once, before sharing
        let base = TestScheduler()
        var onNow: (@Sendable () -> Void)?
        private let inside = Atomic<Bool>(false)
        var now: Duration {
            if !inside.exchange(true, ordering: .relaxed) {
                onNow?()
                inside.store(false, ordering: .relaxed)
            }
            return base.now
        }
        func schedule(_ action: @escaping @Sendable () -> Void) -> any Disposable { base.schedule(action) }
        func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> any Disposable {
            base.schedule(after: delay, action)
        }
    }

    @Test func aSchedulersClockThatReadsTheReplaySubjectItTimestamps() {
        let clock = ReenteringClock()
        let subject = ReplaySubject<Int>(capacity: 10, maxAge: .seconds(5), scheduler: clock)
        clock.onNow = { [weak subject] in _ = subject?.retainedCount }
        let seen = Box<[Int]>([])
        let finished = finishes("a clock read that re-enters the subject") {
            subject.sendNext(1)
            subject.subscribeNext { value in seen.mutate { $0.append(value) } }.dispose()
            subject.sendNext(2)
        }
        #expect(finished)
        #expect(seen.value == [1])
        #expect(subject.retainedCount == 2)
    }

    /// A value whose `==` reads the promise it is compared in.
    struct Reading: Equatable, Sendable {
        let id: Int
        let promise: Box<ValuePromise<Reading>?>
        static func == (lhs: Reading, rhs: Reading) -> Bool {
            _ = lhs.promise.value?.value  // re-enters the promise's subject
            return lhs.id == rhs.id
        }
    }

    @Test func aValuePromisesEqualityThatReadsThePromise() {
        let cell = Box<ValuePromise<Reading>?>(nil)
        let promise = ValuePromise(Reading(id: 0, promise: cell), ignoreRepeated: true)
        cell.value = promise
        let seen = Box<[Int]>([])
        let subscription = promise.get().subscribeNext { value in seen.mutate { $0.append(value.id) } }
        let finished = finishes("an == that re-enters the promise") {
            promise.set(Reading(id: 0, promise: cell))  // equal: ignored
            promise.set(Reading(id: 1, promise: cell))
            promise.set(Reading(id: 1, promise: cell))  // equal: ignored
        }
        #expect(finished)
        #expect(seen.value == [0, 1])
        subscription.dispose()
        cell.value = nil
    }

    @Test func racingEqualSetsOfAnIgnoreRepeatedPromiseSendOnce() {
        for _ in 0..<Workload.size(200) {
            let promise = ValuePromise(0, ignoreRepeated: true)
            let sent = Atomic<Int>(0)
            let subscription = promise.get().subscribeNext { _ in sent.add(1, ordering: .relaxed) }
            _ = runConcurrently(threads: 4) { _ in promise.set(7) }
            #expect(sent.load(ordering: .relaxed) == 2, "the initial value and one 7")
            subscription.dispose()
        }
    }

    /// A scheduler whose `schedule` re-enters the subject feeding the relay it schedules for.
    final class ReenteringScheduler: Scheduler, @unchecked Sendable {  // `onSchedule` is set once, before sharing
        let base = SerialQueueScheduler(label: "re-entering")
        var onSchedule: (@Sendable () -> Void)?
        var runsActionsOnItsOwnThreads: Bool { true }
        var isCurrent: Bool { base.isCurrent }
        func schedule(_ action: @escaping @Sendable () -> Void) -> any Disposable {
            onSchedule?()
            return base.schedule(action)
        }
        func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> any Disposable {
            onSchedule?()
            return base.schedule(after: delay, action)
        }
    }

    @Test func aSchedulersScheduleThatSendsIntoTheSubjectItDeliversFor() {
        let scheduler = ReenteringScheduler()
        let subject = Subject<Int>()
        let extra = Atomic<Int>(0)
        scheduler.onSchedule = { [weak subject] in
            if extra.add(1, ordering: .relaxed).newValue <= 3 { subject?.sendNext(-1) }
        }
        let recorder = Recorder<Int>()
        let subscription = subject.deliver(on: scheduler, bufferSize: 2).subscribe(recorder)
        let finished = finishes("a schedule call that re-enters the relay's source") {
            for value in 1...20 { subject.sendNext(value) }
            subject.sendCompleted()
        }
        #expect(finished)
        #expect(waitUntil { recorder.isCompleted })
        #expect(recorder.values.filter { $0 > 0 } == Array(1...20))
        subscription.dispose()
        scheduler.onSchedule = nil
    }
}
