import Testing
@testable import Ripple
import RippleTestSupport

/// What a subject's `observe(owner:)` bookkeeping costs, counted in observations examined
/// (`OwnedObservations.examined`), never in time: a subscribe examines a fixed number of them
/// however many the subject holds, creating n of them examines O(n) in all, and the list stays
/// within twice the live ones plus a constant.
@Suite(.leakChecked, .offThePool) struct OwnedObservationsScalingTests {
    final class Owner {}

    /// `kind`'s subject with `count` observations whose owners are returned (alive).
    static func subject(_ kind: SubjectKind, observedBy count: Int) -> (any SignalProtocol<Int> & Sendable, [Owner]) {
        let subject = kind.make().signal
        let owners = (0..<count).map { _ in Owner() }
        for owner in owners { subject.observe(owner: owner) { _, _ in } }
        return (subject, owners)
    }

    @Test(arguments: SubjectKind.allCases, [400, 4_000])
    func subscribingExaminesAFixedNumberOfObservationsHoweverManyTheSubjectHolds(kind: SubjectKind, observations: Int) {
        let (subject, owners) = Self.subject(kind, observedBy: observations)
        let owned = ownedObservations(of: subject)
        let before = owned.examined
        for _ in 0..<1_000 { subject.subscribe(next: { _ in }).dispose() }
        let perSubscribe = Double(owned.examined - before) / 1_000
        #expect(perSubscribe <= Double(OwnedObservations.checkedPerSubscribe))
        #expect(OwnedObservations.checkedPerSubscribe <= 8)
        withExtendedLifetime(owners) {}
    }

    @Test(arguments: [false, true])
    func creatingObservationsExaminesLinearlyManyInAll(ownersGoAtOnce: Bool) {
        let subject = Subject<Int>()
        let owned = subject.storage.owned
        let n = 4_000
        var kept: [Owner] = []
        for _ in 0..<n {
            let owner = Owner()
            subject.observe(owner: owner) { _, _ in }
            if !ownersGoAtOnce { kept.append(owner) }
        }
        #expect(owned.examined <= 8 * n)
        withExtendedLifetime(kept) {}
    }

    @Test func theListStaysWithinTwiceTheLiveObservationsPlusAConstant() {
        let subject = Subject<Int>()
        let owned = subject.storage.owned
        let live = (0..<100).map { _ in Owner() }
        for owner in live { subject.observe(owner: owner) { _, _ in } }
        var largest = 0
        for _ in 0..<10_000 {
            subject.observe(owner: Owner()) { _, _ in }  // its owner goes at once; no value is sent
            largest = max(largest, owned.count.load(ordering: .relaxed))
        }
        // The sweep runs while the newest owner is still alive: at most `live.count + 1` survive it.
        #expect(largest <= 2 * (live.count + 1) + OwnedObservations.sweepFloor)
        withExtendedLifetime(live) {}
    }
}

/// A subject's `observe(owner:)` bookkeeping.
func ownedObservations(of subject: any SignalProtocol<Int>) -> OwnedObservations {
    (subject as! any ObservationHost).ownedObservations
}
