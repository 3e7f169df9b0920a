import Testing
@testable import Ripple
import RippleTestSupport

@Suite(.leakChecked) struct SubjectTests {
    @Test func aSubscriberSeesOnlyWhatIsSentAfterItSubscribed() {
        let subject = Subject<String>()
        subject.sendNext("before")
        let r = Recorder<String>()
        subject.subscribe(r)
        subject.sendNext("after")
        #expect(r.events == [.next("after")])
    }

    @Test func subscribingAfterCompletionGetsCompletionAtOnce() {
        let subject = Subject<Int>()
        subject.sendNext(1)
        subject.sendCompleted()
        let r = Recorder<Int>()
        subject.subscribe(r)
        #expect(r.events == [.completed])
    }

    @Test func subscribingAfterAnErrorGetsTheErrorAtOnce() {
        let subject = Subject<Int>()
        subject.sendError(TestError())
        let r = Recorder<Int>()
        let d = subject.subscribe(r)
        #expect(r.events == [.error(TestError())])
        #expect(d.isDisposed)
    }
}

@Suite(.leakChecked) struct BehaviorSubjectTests {
    @Test func aNewSubscriberGetsTheDefaultFirst() {
        let behavior = BehaviorSubject(0)
        let r = Recorder<Int>()
        behavior.subscribe(r)
        #expect(r.events == [.next(0)])
        #expect(behavior.value == 0)
    }

    @Test func aNewSubscriberGetsTheLatestValueThenLiveValues() {
        let behavior = BehaviorSubject(0)
        behavior.sendNext(1)
        behavior.sendNext(2)
        let r = Recorder<Int>()
        behavior.subscribe(r)
        behavior.sendNext(3)
        #expect(r.events == [.next(2), .next(3)])
        #expect(behavior.value == 3)
    }

    @Test func afterCompletionASubscriberGetsTheLatestValueThenCompletion() {
        let behavior = BehaviorSubject(0)
        behavior.sendNext(7)
        behavior.sendCompleted()
        let r = Recorder<Int>()
        behavior.subscribe(r)
        #expect(r.events == [.next(7), .completed])
    }

    @Test func afterAnErrorASubscriberGetsTheErrorOnly() {
        let behavior = BehaviorSubject(0)
        behavior.sendNext(7)
        behavior.sendError(TestError())
        let r = Recorder<Int>()
        behavior.subscribe(r)
        #expect(r.events == [.error(TestError())])
        #expect(behavior.value == 7)
    }

    @Test func valueIsReadableFromInsideACallback() {
        let behavior = BehaviorSubject(0)
        var seen: [Int] = []
        let subscription = behavior.subscribeNext { _ in seen.append(behavior.value) }
        behavior.sendNext(5)
        #expect(seen == [0, 5])
        subscription.dispose()  // the closure captures the subject that holds it
    }
}

@Suite(.leakChecked) struct ReplaySubjectTests {
    @Test func replaysEveryValueWithoutACapacity() {
        let replay = ReplaySubject<Int>()
        for i in 1...5 { replay.sendNext(i) }
        let r = Recorder<Int>()
        replay.subscribe(r)
        #expect(r.values == [1, 2, 3, 4, 5])
    }

    @Test func keepsOnlyTheLastCapacityValues() {
        let replay = ReplaySubject<Int>(capacity: 3)
        for i in 1...10 { replay.sendNext(i) }
        let r = Recorder<Int>()
        replay.subscribe(r)
        replay.sendNext(11)
        #expect(r.values == [8, 9, 10, 11])
        #expect(replay.retainedCount == 3)
    }

    @Test func replaysTheRetainedValuesThenTheTerminalEvent() {
        let completed = ReplaySubject<Int>(capacity: 2)
        [1, 2, 3].forEach(completed.sendNext)
        completed.sendCompleted()
        let a = Recorder<Int>()
        completed.subscribe(a)
        #expect(a.events == [.next(2), .next(3), .completed])

        let failed = ReplaySubject<Int>()
        failed.sendNext(1)
        failed.sendError(TestError())
        let b = Recorder<Int>()
        failed.subscribe(b)
        #expect(b.events == [.next(1), .error(TestError())])
    }

    @Test func aHugeCapacityIsNotAllocatedUpFront() {
        let replay = ReplaySubject<Int>(capacity: 1_000_000_000)
        replay.sendNext(1)
        let slots = replay.storage.withHistory { $0.allocatedSlots }
        #expect(slots <= 4)  // a few words, not a billion slots
        let r = Recorder<Int>()
        replay.subscribe(r)
        #expect(r.values == [1])
    }

    @Test func memoryShrinksAfterValuesExpire() {
        let clock = TestScheduler()
        let replay = ReplaySubject<Int>(capacity: 1_000_000, maxAge: .milliseconds(10), scheduler: clock)
        for i in 0..<10_000 { replay.sendNext(i) }
        clock.advance(by: .milliseconds(20))
        replay.sendNext(-1)
        #expect(replay.storage.withHistory { $0.allocatedSlots } <= 64)
        #expect(replay.retainedCount == 1)
    }

    @Test func maxAgeDropsValuesOlderThanTheAgeOnTheSchedulersClock() {
        let clock = TestScheduler()
        let replay = ReplaySubject<String>(capacity: 100, maxAge: .milliseconds(30), scheduler: clock)
        replay.sendNext("a")                       // t = 0
        clock.advance(by: .milliseconds(20))
        replay.sendNext("b")                       // t = 20
        clock.advance(by: .milliseconds(20))       // t = 40: "a" is 40 ms old
        let r = Recorder<String>()
        replay.subscribe(r)
        #expect(r.values == ["b"])
    }

    @Test func anExpiredValueIsNeverReplayedEvenWhenNothingNewWasSent() {
        let clock = TestScheduler()
        let replay = ReplaySubject<Int>(capacity: 10, maxAge: .seconds(1), scheduler: clock)
        replay.sendNext(1)
        clock.advance(by: .seconds(2))
        let r = Recorder<Int>()
        replay.subscribe(r)
        #expect(r.values.isEmpty)
        #expect(replay.retainedCount == 0)
    }

    @Test func capacityAndMaxAgeBothBound() {
        let clock = TestScheduler()
        let replay = ReplaySubject<Int>(capacity: 2, maxAge: .seconds(10), scheduler: clock)
        [1, 2, 3].forEach(replay.sendNext)
        let r = Recorder<Int>()
        replay.subscribe(r)
        #expect(r.values == [2, 3])
    }

    @Test func aCapacityBelowOneStopsWithAMessageNamingIt() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = ReplaySubject<Int>(capacity: 0)
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("needs a capacity of at least 1, got 0"))
    }
}
