import Testing
@testable import Ripple
import RippleTestSupport

/// `subscribe` called from inside a subject's own callback: the new subscriber joins the
/// running delivery, so its replay comes after the current event has reached every subscriber,
/// and `subscribe` returns before that replay. Nothing is lost or doubled.
@Suite(.leakChecked) struct SubscribeFromCallbackTests {
    @Test func aReplayRequestedFromACallbackComesAfterTheCurrentEventReachedEverySubscriber() {
        let subject = ReplaySubject<Int>(capacity: 10)
        let log = Box<[String]>([])
        var late: (any Disposable)?
        subject.sendNext(1)
        let first = subject.subscribeNext { value in
            log.mutate { $0.append("A\(value)") }
            if value == 2, late == nil {
                late = subject.subscribeNext { value in log.mutate { $0.append("C\(value)") } }
                log.mutate { $0.append("subscribe returned") }
            }
        }
        let second = subject.subscribeNext { value in log.mutate { $0.append("B\(value)") } }
        subject.sendNext(2)
        subject.sendNext(3)
        #expect(log.value == ["A1", "B1", "A2", "subscribe returned", "B2", "C1", "C2", "A3", "B3", "C3"])
        for subscription in [first, second, late!] { subscription.dispose() }
    }

    @Test func aBehaviorSubjectsLatestValueReachesASubscriberMadeInACallbackOnceAfterTheEvent() {
        let subject = BehaviorSubject(0)
        let log = Box<[String]>([])
        var late: (any Disposable)?
        let first = subject.subscribeNext { value in
            log.mutate { $0.append("A\(value)") }
            if value == 1, late == nil {
                late = subject.subscribeNext { value in log.mutate { $0.append("C\(value)") } }
            }
        }
        let second = subject.subscribeNext { value in log.mutate { $0.append("B\(value)") } }
        subject.sendNext(1)
        subject.sendNext(2)
        #expect(log.value == ["A0", "B0", "A1", "B1", "C1", "A2", "B2", "C2"])
        for subscription in [first, second, late!] { subscription.dispose() }
    }
}
