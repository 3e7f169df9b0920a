import Foundation
import Synchronization
import Testing
@testable import Ripple
import RippleTestSupport

/// Review of 3344dd5 (subscriptions held their subject's storage strongly; reverted): what a
/// subscription the user still holds after its subject went away must not keep alive.
@Suite(.leakChecked) struct StrongStorageReviewTests {
    final class Payload {}

    /// Before 3344dd5 the storage (and its history) went with the subject: the subscription held
    /// it weakly. Now an ended subscription that the user keeps (a dispose bag, a property) keeps
    /// the whole storage, with every value of a ReplaySubject's history, until it is released.
    @Test func aKeptSubscriptionDoesNotKeepAGoneReplaySubjectsHistory() {
        weak var weakPayload: Payload?
        var kept: (any Disposable)?
        do {
            let subject = ReplaySubject<Payload>(capacity: 10)
            let payload = Payload()
            weakPayload = payload
            subject.sendNext(payload)
            kept = subject.subscribe(next: { _ in }, error: nil, completed: nil)
        }
        #expect(kept?.isDisposed == true)  // ended by the subject going away
        #expect(weakPayload == nil)  // fails: the ended subscription keeps the history
        kept = nil
        #expect(weakPayload == nil)
    }

    /// The same for a BehaviorSubject's latest value.
    @Test func aKeptSubscriptionDoesNotKeepAGoneBehaviorSubjectsValue() {
        weak var weakPayload: Payload?
        var kept: (any Disposable)?
        do {
            let payload = Payload()
            weakPayload = payload
            let subject = BehaviorSubject(payload)
            kept = subject.subscribe(next: { _ in }, error: nil, completed: nil)
            kept?.dispose()  // even a subscription disposed long before the subject went away
        }
        #expect(weakPayload == nil)  // fails: the disposed subscription keeps the latest value
        kept = nil
    }

    /// A bag that outlives many short-lived subjects grows by a whole storage (and history) per
    /// subject, where it grew by one small subscription object before.
    @Test func aLongLivedBagDoesNotKeepTheStoragesOfGoneSubjects() {
        let bag = CompoundDisposable()
        weak var lastStorage: SubjectStorage<Payload, ReplayHistory<Payload>>?
        for _ in 0..<100 {
            let subject = ReplaySubject<Payload>(capacity: 4)
            lastStorage = subject.storage
            for _ in 0..<4 { subject.sendNext(Payload()) }
            bag.add(subject.subscribe(next: { _ in }, error: nil, completed: nil))
        }
        #expect(lastStorage == nil)  // fails: the bag keeps every gone subject's storage
        bag.dispose()
    }
}
