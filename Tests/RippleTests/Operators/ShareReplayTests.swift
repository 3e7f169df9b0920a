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
        #expect(made == 3, "one now, one after each run's end")
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
        #expect(made == 2, "the first subject was kept across the dispose")
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
