import Foundation
import Synchronization
import Testing
@testable import Ripple
import RippleTestSupport
import RippleTesting

@Suite(.leakChecked) struct ShareReplayTests {
    @Test func aLateSubscriberGetsTheLatestValuesOfTheCurrentRunThenLiveOnes() {
        let clock = TestScheduler()
        let source = clock.cold("-1-2-3--4--|")
        let shared = source.share(replay: 2)
        let a = clock.record(shared)
        clock.advance(to: .milliseconds(60))
        let b = clock.record(shared)
        clock.run()
        #expect(a.events == "-1-2-3--4--|")
        #expect(b.events == "------(23)-4--|")
        #expect(source.subscriptions == ["^----------!"], "one run, shared")
    }

    @Test func aSubscriberAfterTheRunEndedStartsAFreshRunWithoutTheOldReplay() {
        let clock = TestScheduler()
        let source = clock.cold("-1-2|")
        let shared = source.share(replay: 1)
        let a = clock.record(shared)
        clock.advance(to: .milliseconds(60))
        let c = clock.record(shared)
        clock.run()
        #expect(a.events == "-1-2|")
        #expect(c.events == "-------1-2|")
        #expect(source.subscriptions == ["^---!", "------^---!"])
    }

    @Test func theLastSubscriberLeavingDisconnectsAndForgetsTheReplay() {
        let clock = TestScheduler()
        let source = clock.cold("-1-2-3|")
        let shared = source.share(replay: 3)
        let a = clock.record(shared)
        clock.advance(to: .milliseconds(40))
        a.dispose()
        #expect(clock.nextDueTime == nil, "the run was disposed")
        let b = clock.record(shared)
        clock.run()
        #expect(b.events == "-----1-2-3|", "a fresh run at 40 ms, nothing replayed from the first")
        #expect(source.subscriptions == ["^---!", "----^-----!"])
    }

    @Test func anErrorReachesEverySubscriberAndTheNextOneRunsTheSourceAgain() {
        let clock = TestScheduler()
        let source = clock.cold("-1#")
        let shared = source.share(replay: 1)
        let a = clock.record(shared)
        clock.run()
        let b = clock.record(shared)
        clock.run()
        #expect(a.events == "-1#")
        #expect(b.events == "---1#")
        #expect(source.subscriptions.count == 2)
    }

    @Test func replayZeroIsShare() {
        let clock = TestScheduler()
        let source = clock.cold("-1-2-3|")
        let shared = source.share(replay: 0)
        _ = clock.record(shared)
        clock.advance(to: .milliseconds(40))
        let b = clock.record(shared)
        clock.run()
        #expect(b.events == "-----3|")
    }
}

@Suite(.leakChecked) struct MulticastMakeSubjectTests {
    @Test func eachRunAfterTheSourceEndedGetsAFreshSubject() {
        let clock = TestScheduler()
        var made = 0
        let source = clock.cold("-1|")
        let connection = source.multicast(makeSubject: { () -> Subject<String> in
            made += 1
            return Subject()
        })
        let a = clock.record(connection.signal)
        connection.connect()
        clock.run()
        let b = clock.record(connection.signal)
        connection.connect()
        clock.run()
        #expect(a.events == "-1|")
        #expect(b.events == "---1|", "a fresh run, not the ended subject's completion")
        #expect(source.subscriptions == ["^-!", "--^-!"])
        #expect(made == 2, "one for each run, made when a subscriber needed it")
    }

    @Test func aReplayingSubjectReplaysOnlyItsOwnRun() {
        let clock = TestScheduler()
        let source = clock.cold("-1-2|")
        let connection = source.multicast(makeSubject: { ReplaySubject<String>(capacity: 1) })
        connection.connect()
        clock.advance(to: .milliseconds(30))
        let late = clock.record(connection.signal)
        clock.run()
        let next = clock.record(connection.signal)
        connection.connect()
        clock.run()
        #expect(late.events == "---2|", "the latest value of the running run, then its end")
        #expect(next.events == "-----1-2|", "the next run's subject knows nothing of the first run")
    }

    @Test func disposingTheConnectionKeepsTheSubjectAndItsSubscribersForTheNextConnect() {
        let clock = TestScheduler()
        var made = 0
        let source = clock.cold("-1--2|")
        let connection = source.multicast(makeSubject: { () -> Subject<String> in
            made += 1
            return Subject()
        })
        let a = clock.record(connection.signal)
        let run = connection.connect()
        clock.advance(to: .milliseconds(20))
        run.dispose()
        #expect(clock.nextDueTime == nil)
        connection.connect()
        clock.run()
        #expect(a.events == "-1-1--2|")
        #expect(made == 1, "the first subject was kept across the dispose")
    }

    @Test func theFactoryRunsWhenASubscriberOrConnectNeedsASubjectNotWhenARunEnds() {
        let clock = TestScheduler()
        var made = 0
        var ending = false
        var madeWhileEnding = 0
        let source = clock.cold("-1|").onCompleted { ending = true }
        let connection = source.multicast(makeSubject: { () -> Subject<String> in
            made += 1
            if ending { madeWhileEnding += 1 }
            return Subject()
        })
        #expect(made == 0, "building the connection makes nothing")
        let a = clock.record(connection.signal)
        #expect(made == 1, "the first subscriber needs a subject")
        connection.connect()
        clock.run()
        ending = false
        #expect(a.events == "-1|")
        #expect(made == 1, "the run's end lets go of its subject without making the next")
        #expect(madeWhileEnding == 0)
        connection.connect()
        #expect(made == 2, "connect() makes the next run's subject")
        clock.run()
    }

    @Test(.offThePool) func aSubjectOfAnotherTypeIsFedOneEventAtATimeFromASourceSendingOnTwoThreads() {
        for round in 0..<10 {
            let subject = UnserializedSubject()
            let source = Signal<Int> { s in
                runConcurrently(threads: 2) { thread in
                    for i in 0..<2_000 { s.sendNext(thread * 10_000 + i) }
                }
                s.sendCompleted()
                return nil
            }
            let connection = source.multicast(makeSubject: { subject })
            let returned = finishes("round \(round): a source sending on two threads into the factory's subject") {
                connection.connect()
            }
            #expect(subject.overlaps == 0, "round \(round): the subject's methods overlapped")
            #expect(subject.received == 4_000 && subject.completions == 1,
                    "round \(round): \(subject.received) values, \(subject.completions) completions")
            if !returned || subject.overlaps > 0 { break }
        }
    }

    @Test func autoconnectRunsTheSourceAgainForASubscriberAfterTheEnd() {
        let clock = TestScheduler()
        let source = clock.cold("-1|")
        let shared = source.multicast(makeSubject: { ReplaySubject<String>(capacity: 1) }).autoconnect()
        let a = clock.record(shared)
        clock.run()
        let b = clock.record(shared)
        clock.run()
        #expect(a.events == "-1|")
        #expect(b.events == "---1|")
        #expect(source.subscriptions == ["^-!", "--^-!"])
    }
}

/// A subject of the user's own type that serializes nothing: it counts the calls that overlap
/// (a second thread inside while one is) and the events it gets; subscribing does nothing.
final class UnserializedSubject: SignalProtocol, SubscriberProtocol, @unchecked Sendable {  // counters are atomics; no other state
    typealias Value = Int
    private let inside = Atomic<Int>(0)
    private let overlapCount = Atomic<Int>(0)
    private let values = Atomic<Int>(0)
    private let ends = Atomic<Int>(0)

    var overlaps: Int { overlapCount.load(ordering: .relaxed) }
    var received: Int { values.load(ordering: .relaxed) }
    var completions: Int { ends.load(ordering: .relaxed) }

    private func inside(_ body: () -> Void) {
        if inside.add(1, ordering: .acquiringAndReleasing).newValue > 1 { overlapCount.add(1, ordering: .relaxed) }
        sched_yield()  // widens the window another thread's call could overlap
        body()
        inside.subtract(1, ordering: .acquiringAndReleasing)
    }

    func sendNext(_ value: Int) { inside { values.add(1, ordering: .relaxed) } }
    func sendError(_ error: any Error) { inside { ends.add(1, ordering: .relaxed) } }
    func sendCompleted() { inside { ends.add(1, ordering: .relaxed) } }
    var isDisposed: Bool { false }
    func subscribe(_ subscriber: any SubscriberProtocol<Int>) -> any Disposable { ActionDisposable {} }
}
