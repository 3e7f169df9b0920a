import Ripple
import RippleTestSupport
import RippleTesting
import Testing

@Suite struct MarbleTestSignalTests {
    @Test func aColdMarbleSignalEmitsAtTheMarblesTimesAfterEachSubscribe() {
        let clock = TestScheduler()
        let source = clock.cold("-a-b-|", values: ["a": 1, "b": 2])
        let first = clock.record(source)
        clock.advance(to: .milliseconds(20))
        let second = clock.record(source)
        clock.run()
        #expect(first.events == [.next(10, 1), .next(30, 2), .completed(50)])
        #expect(second.events == [.next(30, 1), .next(50, 2), .completed(70)])
        #expect(source.subscriptions == ["^----!", "--^----!"])
    }

    @Test func aColdSignalSendsItsFirstFrameDuringTheSubscribe() {
        let clock = TestScheduler()
        let recorder = clock.record(clock.cold("(1|)", values: ["1": 1]))
        #expect(recorder.events == [.next(0, 1), .completed(0)])
        #expect(clock.nextDueTime == nil)
    }

    @Test func aHotSignalsEventsBeforeTheSubscriptionPointAreNotSeen() {
        let clock = TestScheduler()
        let source = clock.hot("-x-^-a--#")
        let recorder = clock.record(source)
        clock.run()
        #expect(recorder.events == "--a--#")
        #expect(source.messages == "--a--#")
        #expect(source.subscriptions == ["^----!"])
    }

    @Test func aHotSignalsEventsBeforeASubscribeAreNotSeenBySubscribersThatComeLater() {
        let clock = TestScheduler()
        let source = clock.hot("-a-b-c-|")
        clock.advance(to: .milliseconds(20))
        let recorder = clock.record(source)
        clock.run()
        #expect(recorder.events == "---b-c-|")
        #expect(source.subscriptions == ["--^----!"])
    }

    @Test func hashInMarblesStandsForTheGivenError() {
        let clock = TestScheduler()
        let timeout = TimeoutError(interval: .milliseconds(40))
        let recorder = clock.record(clock.cold("-a-#", error: timeout))
        clock.run()
        #expect(recorder.events == RecordedEvents("-a-#", error: timeout))
        #expect(recorder.events != "-a-#")  // MarbleError() is another error
        #expect(recorder.events.last?.event.error is TimeoutError)
    }

    @Test func recordedTestSignalsUseAbsoluteTimesWhenHotAndRelativeTimesWhenCold() {
        let clock = TestScheduler()
        let hot = clock.hot(.next(150, "h"), .next(1100, "late"))
        let cold = clock.cold(.next(10, "c"), .completed(20))
        let recorder = clock.start { hot.merge(cold) }
        #expect(recorder.events == [.next(210, "c")])
        #expect(hot.subscriptions == [RecordedSubscription(200, 1000)])
        #expect(cold.subscriptions == [RecordedSubscription(200, 220)])
    }
}

@Suite struct TestingArticleTests {
    @Test func searchWaitsForAPauseInTyping() {
        let clock = TestScheduler()
        let typed = clock.hot("-a-b----c-------|")
        let searches = clock.record(typed.debounce(.milliseconds(30), on: clock))
        clock.run()
        #expect(searches.events == "------b----c----|")
        #expect(typed.subscriptions == ["^---------------!"])
        #expect(RecordedEvents<String>("------b-----c---|").description == "------b-----c---|")
    }

    @Test func aLegendNamesValuesThatAreNotOneCharacter() {
        let clock = TestScheduler()
        let prices = clock.cold("-a-b-|", values: ["a": 1, "b": 2])
        let recorder = clock.record(prices.map { $0 * 10 })
        clock.run()
        #expect(recorder.events.description == "-a-b-|   a = 10, b = 20")
    }
}

@Suite struct RecorderTests {
    @Test func theRecordersDescriptionIsTheMarbleLine() {
        let events: RecordedEvents<String> = [.next(10, "a"), .next(30, "b"), .next(30, "c"), .completed(30)]
        #expect(events.description == "-a-(bc|)")
        #expect(RecordedEvents<String>("-a-(bc|)") == events)
    }

    @Test func valuesLongerThanOneCharacterPrintAsLettersWithALegend() {
        let events: RecordedEvents<Int> = [.next(10, 10), .next(20, 200), .next(30, 10), .error(40, MarbleError())]
        #expect(events.description == "-aba#   a = 10, b = 200, # = error")
    }

    @Test func eventsOffTheGridPrintAsTimes() {
        let events: RecordedEvents<Int> = [.next(15, 1), .completed(.seconds(1))]
        #expect(events.description == "[15ms: next(1), 1000ms: completed]")
        #expect(RecordedEvents<Int>([]).description == "(no events)")
    }

    @Test func aMarbleLineAndAListOfRecordedEventsCompareEqual() {
        let clock = TestScheduler()
        let recorder = clock.record(clock.cold("-a-b-|", values: ["a": 1, "b": 2]).map { $0 * 10 })
        clock.run()
        #expect(recorder.events == RecordedEvents("-a-b-|", values: ["a": 10, "b": 20]))
        #expect(recorder.events == [.next(10, 10), .next(30, 20), .completed(50)])
        #expect(recorder.values == [10, 20])
    }

    @Test func disposingTheRecorderEndsItsSubscription() {
        let clock = TestScheduler()
        let source = clock.hot("-a-b-c-|")
        let recorder = clock.record(source)
        clock.advance(to: .milliseconds(30))
        recorder.dispose()
        clock.run()
        #expect(recorder.events == "-a-b")
        #expect(source.subscriptions == ["^--!"])
    }
}

@Suite struct SubscriptionLogTests {
    @Test func aSubscriptionLogReadsAsAMarbleSubscriptionLine() {
        let clock = TestScheduler()
        let source = clock.cold("---a--|")
        _ = clock.record(source.take(1))
        clock.run()
        #expect(source.subscriptions == ["^--!"])
        #expect(source.subscriptions == [RecordedSubscription(0, 30)])
        #expect(source.subscriptions.map(\.description) == ["^--!"])
    }

    @Test func subscriptionLinesParseAndPrint() {
        #expect(RecordedSubscription(marbles: "--^--!") == RecordedSubscription(20, 50))
        #expect(RecordedSubscription(marbles: "-(^!)") == RecordedSubscription(10, 10))
        #expect(RecordedSubscription(10, 10).description == "-(^!)")
        #expect(RecordedSubscription(20).description == "--^")
        #expect(RecordedSubscription(marbles: "  ^-!") == RecordedSubscription(0, 20))
    }
}

@Suite struct StartTests {
    @Test func startCreatesAt100SubscribesAt200AndDisposesAt1000() {
        let clock = TestScheduler()
        var createdAt: Duration?
        let source = clock.hot(.next(150, 1), .next(210, 2), .next(999, 3), .next(1000, 4), .next(1100, 5))
        let recorder = clock.start { () -> Signal<Int> in
            createdAt = clock.now
            return source.asSignal()
        }
        #expect(createdAt == .milliseconds(100))
        #expect(recorder.events == [.next(210, 2), .next(999, 3), .next(1000, 4)])
        #expect(source.subscriptions == [RecordedSubscription(200, 1000)])
        #expect(clock.now == .milliseconds(1000))
    }

    @Test func startTakesOtherTimes() {
        let clock = TestScheduler()
        let source = clock.cold("-a-|")
        let recorder = clock.start(created: .zero, subscribed: .milliseconds(50), disposed: .milliseconds(70)) { source }
        #expect(recorder.events == "------a")
        #expect(source.subscriptions == ["-----^-!"])
    }

    @Test func aColdSignalWithoutATerminalEventStaysSubscribedUntilDisposed() {
        let clock = TestScheduler()
        let source = clock.cold("-a-b")
        let recorder = clock.start { source }
        #expect(recorder.events == [.next(210, "a"), .next(230, "b")])
        #expect(source.subscriptions == [RecordedSubscription(200, 1000)])
    }

    /// As in RxTest: at `disposed`, what the signal scheduled after `start` was called (a cold
    /// event, a timer's tick) runs after the dispose, so it is not recorded.
    @Test func startDisposesBeforeWhatTheSignalScheduledForTheSameTime() {
        let clock = TestScheduler()
        let cold = clock.start { clock.cold([.next(800, 1), .next(799, 0)].sorted { $0.time < $1.time }) }
        #expect(cold.events == [.next(999, 0)])
        let ticks = TestScheduler().start { () -> Signal<Int> in Signal<Int>.interval(.milliseconds(100), on: Schedulers.current as! TestScheduler) }
        #expect(ticks.events.map(\.time) == (3...9).map { .milliseconds($0 * 100) })
    }

    /// As in RxTest: a hot signal made inside `create` schedules its events after `start`'s
    /// steps, so the subscribe at 200 ms comes first and sees an event at 200 ms.
    @Test func aHotSignalMadeInsideCreateSeesAnEventAtTheSubscriptionTime() {
        let clock = TestScheduler()
        let recorder = clock.start { clock.hot(.next(200, 1), .next(300, 2), .next(1000, 3)) }
        #expect(recorder.events == [.next(200, 1), .next(300, 2)])
    }

    @Test func startReturnsWhileAPeriodicTimerLives() {
        let clock = TestScheduler()
        let recorder = clock.start { Signal<Int>.interval(.milliseconds(300), on: clock) }
        #expect(recorder.events == [.next(500, 0), .next(800, 1)])
    }
}

@Suite struct TestSchedulerTimeTests {
    @Test func scheduleAtRunsAtTheAbsoluteTime() {
        let clock = TestScheduler()
        clock.advance(to: .milliseconds(30))
        let ranAt = Locked<Duration?>(nil)
        clock.schedule(at: .milliseconds(100)) { ranAt.withLock { $0 = clock.now } }
        clock.schedule(at: .milliseconds(10)) {}  // already past: runs now, at the next advance
        #expect(clock.nextDueTime == .milliseconds(30))
        clock.run()
        #expect(ranAt.withLock { $0 } == .milliseconds(100))
    }

    @Test func nextDueTimeSkipsCancelledActions() {
        let clock = TestScheduler()
        #expect(clock.nextDueTime == nil)
        let first = clock.schedule(after: .milliseconds(40)) {}
        clock.schedule(after: .milliseconds(70)) {}
        #expect(clock.nextDueTime == .milliseconds(40))
        first.dispose()
        #expect(clock.nextDueTime == .milliseconds(70))
        #expect(clock.pendingCount == 2)
    }

    @Test func runUntilReturnsWithAPeriodicTimerLive() {
        let clock = TestScheduler()
        let recorder = clock.record(Signal<Int>.interval(.milliseconds(10), on: clock))
        clock.run(until: .milliseconds(35))
        #expect(recorder.events == [.next(10, 0), .next(20, 1), .next(30, 2)])
        #expect(clock.now == .milliseconds(35))
        #expect(clock.nextDueTime == .milliseconds(40))
        recorder.dispose()
    }

    @Test func runUntilIdleStopsAtTheLimitWhileAPeriodicTimerLives() {
        let clock = TestScheduler()
        let recorder = clock.record(Signal<Int>.interval(.milliseconds(10), on: clock))
        #expect(clock.runUntilIdle(limit: 5) == false)
        #expect(recorder.values == [0, 1, 2, 3, 4])
        #expect(clock.now == .milliseconds(50))
        recorder.dispose()
        #expect(clock.runUntilIdle() == true)
    }
}

@Suite struct MarbleSyntaxTests {
    @Test func aParseErrorNamesTheColumn() {
        #expect(throws: MarbleSyntaxError(
            marbles: "-a-$", column: 4,
            message: "bad marble character \"$\"; use - | # ( ) ^ ! letters, digits and spaces")) {
            try Marble.parse("-a-$")
        }
        #expect(throws: MarbleSyntaxError(marbles: "-a|b", column: 4, message: "marble event after the stream ended")) {
            try Marble.parse("-a|b")
        }
        #expect(throws: MarbleSyntaxError(marbles: "-(ab", column: 2, message: "unclosed '(' in marbles")) {
            try Marble.parse("-(ab")
        }
    }

    @Test func aBadMarbleStringStopsTheTestWithAMessageNamingTheColumn() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = TestScheduler().cold("-a-$")
        }
        if let result {
            let message = String(decoding: result.standardErrorContent, as: UTF8.self)
            #expect(message.contains("marbles \"-a-$\", column 4: bad marble character \"$\""))
        }
    }

    @Test func aValueMissingFromTheDictionaryStopsTheTestNamingTheColumn() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = TestScheduler().hot("-a-b", values: ["a": 1])
        }
        if let result {
            let message = String(decoding: result.standardErrorContent, as: UTF8.self)
            #expect(message.contains("column 4: \"b\" is not in the values dictionary (a)"))
        }
    }

    @Test func groupsTakeOneFrame() throws {
        let parsed = try Marble.parse("-a-(b|)-")
        #expect(parsed.events.map(\.frame) == [1, 3, 3])
        #expect(parsed.frameCount == 5)
    }
}
