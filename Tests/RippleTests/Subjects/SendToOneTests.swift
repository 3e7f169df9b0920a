import Testing
@testable import Ripple
import RippleTestSupport

/// `sendNext(_:to:)`: firing to one subscription of a subject (Uber Signals).
@Suite(.leakChecked) struct SendToOneTests {
    @Test func aValueSentToOneSubscriptionReachesItAlone() {
        let subject = Subject<Int>()
        let a = Recorder<Int>(), b = Recorder<Int>()
        let toA = subject.subscribe(a)
        subject.subscribe(b)
        #expect(subject.sendNext(1, to: toA))
        subject.sendNext(2)
        #expect(a.values == [1, 2])
        #expect(b.values == [2])
    }

    @Test func aBehaviorSubjectKeepsItsValueAndAReplaySubjectDoesNotReplayIt() {
        let behavior = BehaviorSubject(0)
        let first = behavior.subscribeNext { _ in }
        #expect(behavior.sendNext(7, to: first))
        #expect(behavior.value == 0)
        let replay = ReplaySubject<Int>(capacity: 10)
        let seen = Box<[Int]>([])
        let early = replay.subscribeNext { value in seen.mutate { $0.append(value) } }
        replay.sendNext(1)
        #expect(replay.sendNext(2, to: early))
        let late = Recorder<Int>()
        replay.subscribe(late)
        #expect(seen.value == [1, 2])
        #expect(late.values == [1])
        first.dispose()
        early.dispose()
    }

    @Test func aSendToOneFromACallbackIsDeliveredAfterThatDeliveryInTheSubjectsOrder() {
        let subject = Subject<Int>()
        let log = Box<[String]>([])
        let bHolder = Box<(any Disposable)?>(nil)
        subject.subscribeNext { value in
            log.mutate { $0.append("a\(value)") }
            if value == 1, let b = bHolder.value { subject.sendNext(10, to: b) }
        }
        bHolder.value = subject.subscribeNext { value in log.mutate { $0.append("b\(value)") } }
        subject.sendNext(1)
        // Queued behind the delivery of 1 (to a, then b), like a re-entrant sendNext.
        #expect(log.value == ["a1", "b1", "b10"])
        subject.sendCompleted()
    }

    @Test func aDisposedEndedOrForeignSubscriptionIsRefused() {
        let subject = Subject<Int>(), other = Subject<Int>()
        let recorder = Recorder<Int>()
        let subscription = subject.subscribe(recorder)
        let foreign = other.subscribeNext { _ in }
        #expect(!subject.sendNext(1, to: foreign), "not this subject's subscription")
        #expect(!subject.sendNext(1, to: ActionDisposable {}), "not a subscription at all")
        subscription.dispose()
        #expect(!subject.sendNext(2, to: subscription), "disposed")
        let live = subject.subscribe(recorder)
        subject.sendCompleted()
        #expect(!subject.sendNext(3, to: live), "the subject ended")
        #expect(recorder.values.isEmpty)
        foreign.dispose()
    }

    @Test func aSendToOneAfterTheSubjectAcceptedItsEndIsRefusedThoughTheEndIsNotDeliveredYet() {
        let subject = Subject<Int>()
        let bValues = Box<[Int]>([])
        let bHolder = Box<(any Disposable)?>(nil)
        let accepted = Box<Bool?>(nil)
        subject.subscribeNext { value in
            guard value == 1, let b = bHolder.value else { return }
            subject.sendCompleted()  // accepted now, delivered after this callback
            accepted.value = subject.sendNext(9, to: b)  // b has not seen the end yet
        }
        bHolder.value = subject.subscribe(next: { value in bValues.mutate { $0.append(value) } })
        subject.sendNext(1)
        #expect(accepted.value == false)
        #expect(bValues.value == [1])
    }
}
