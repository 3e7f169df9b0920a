import Foundation
import Synchronization
import Testing
@testable import Ripple
import RippleTestSupport

/// What a subscription the user still holds after its subject went away must not keep alive: the
/// subject's storage and history. (Subscriptions hold the storage weakly; these tests fail if
/// they hold it strongly.)
@Suite(.leakChecked) struct GoneSubjectStorageTests {
    final class Payload {}

    /// The storage (and its history) goes with the subject: the subscription holds it weakly.
    /// Held strongly, an ended subscription that the user keeps (a dispose bag, a property) would
    /// keep the whole storage, with every value of a ReplaySubject's history, until released.
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
        #expect(weakPayload == nil)  // fails if the ended subscription keeps the history
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
        #expect(weakPayload == nil)  // fails if the disposed subscription keeps the latest value
        kept = nil
    }

    /// A bag that outlives many short-lived subjects grows by one small subscription object per
    /// subject, not by a whole storage (and history).
    @Test func aLongLivedBagDoesNotKeepTheStoragesOfGoneSubjects() {
        let bag = CompoundDisposable()
        weak var lastStorage: SubjectStorage<Payload, ReplayHistory<Payload>>?
        for _ in 0..<100 {
            let subject = ReplaySubject<Payload>(capacity: 4)
            lastStorage = subject.storage
            for _ in 0..<4 { subject.sendNext(Payload()) }
            bag.add(subject.subscribe(next: { _ in }, error: nil, completed: nil))
        }
        #expect(lastStorage == nil)  // fails if the bag keeps every gone subject's storage
        bag.dispose()
    }
}
