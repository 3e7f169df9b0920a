import Testing
@testable import Ripple
import RippleTestSupport
import RippleTesting

/// `withLatest(from:)`, `combinePrevious`, and the four- and five-signal `zip` and `combineLatest`.
@Suite(.leakChecked) struct PairingTests {
    @Test func withLatestPairsEachValueWithTheOthersLatestAndDropsValuesBeforeIt() {
        let clock = TestScheduler()
        let source = clock.hot("-1---2-3---|")
        let other = clock.hot("---a---b-|")
        let r = clock.record(source.withLatest(from: other).map { "\($0)\($1)" })
        clock.run()
        #expect(r.events == [.next(50, "2a"), .next(70, "3a"), .completed(110)])
        #expect(source.subscriptions == ["^----------!"])
        #expect(other.subscriptions == ["^--------!"], "the other's completion ends only its own subscription")
    }

    @Test func withLatestKeepsPairingTheLastValueAfterTheOtherCompletes() {
        let clock = TestScheduler()
        let r = clock.record(clock.hot("---1-2|").withLatest(from: clock.hot("-a|")).map { "\($0)\($1)" })
        clock.run()
        #expect(r.events == [.next(30, "1a"), .next(50, "2a"), .completed(60)])
    }

    @Test func withLatestForwardsAnErrorOfEitherSignal() {
        let clock = TestScheduler()
        let source = clock.hot("-1----")
        let failing = clock.record(source.withLatest(from: clock.hot("a--#")).map { "\($0)\($1)" })
        clock.run()
        #expect(failing.events == [.next(10, "1a"), .error(30, MarbleError())])
        #expect(source.subscriptions == ["^--!"])
        let clock2 = TestScheduler()
        let r2 = clock2.record(clock2.hot("-1-#").withLatest(from: clock2.hot("a")).map { "\($0)\($1)" })
        clock2.run()
        #expect(r2.events == [.next(10, "1a"), .error(30, MarbleError())])
    }

    @Test func withLatestSubscribesTheOtherFirstSoAValueItSendsAtOnceIsThere() {
        let r = Recorder<String>()
        Signal.from([1, 2]).withLatest(from: BehaviorSubject("x")).map { "\($0)\($1)" }.subscribe(r)
        #expect(r.events == [.next("1x"), .next("2x"), .completed])
    }

    @Test func withLatestDeliversAValueSentBackFromItsSubscriberAfterTheCurrentOne() {
        let source = Subject<Int>()
        let other = BehaviorSubject("x")
        var seen: [String] = []
        let d = source.withLatest(from: other).subscribeNext { value, latest in
            seen.append("\(value)\(latest)")
            if value == 1 {
                source.sendNext(2)
                seen.append("sent")
            }
        }
        source.sendNext(1)
        #expect(seen == ["1x", "sent", "2x"])
        d.dispose()
    }

    @Test func withLatestDisposedLeavesNeitherSignalSubscribed() {
        let clock = TestScheduler()
        let source = clock.hot("-1-2-3-")
        let other = clock.hot("a------")
        let r = clock.record(source.withLatest(from: other))
        clock.advance(by: .milliseconds(40))
        r.dispose()
        clock.run()
        #expect(r.events.count == 2)
        #expect(source.subscriptions == ["^---!"])
        #expect(other.subscriptions == ["^---!"])
    }

    @Test func combinePreviousStartsWithTheInitialValue() {
        let clock = TestScheduler()
        let r = clock.record(clock.hot("-1-2-3-|").combinePrevious("0").map { "\($0)\($1)" })
        clock.run()
        #expect(r.events == [.next(10, "01"), .next(30, "12"), .next(50, "23"), .completed(70)])
    }

    @Test func combinePreviousWithoutAnInitialValueStartsAtTheSecondValue() {
        let r = Recorder<String>()
        Signal.from([1, 2, 3]).combinePrevious().map { "\($0)\($1)" }.subscribe(r)
        #expect(r.events == [.next("12"), .next("23"), .completed])
        let one = Recorder<String>()
        Signal.just(1).combinePrevious().map { "\($0)\($1)" }.subscribe(one)
        #expect(one.events == [.completed])
    }

    @Test func combinePreviousForwardsErrors() {
        let clock = TestScheduler()
        let r = clock.record(clock.hot("-1-#").combinePrevious().map { "\($0)\($1)" })
        clock.run()
        #expect(r.events == [.error(30, MarbleError())])
    }

    @Test func zipOfFourAndFivePairsTheNthValuesOfEach() {
        let clock = TestScheduler()
        let a = clock.hot("-1---2---|")
        let b = clock.hot("--x---y--|")
        let c = clock.hot("---p---q-|")
        let d = clock.hot("----u---v|")
        let four = clock.record(a.zip(b, c, d).map { "\($0)\($1)\($2)\($3)" })
        let e = clock.hot("-------------5|")
        let five = clock.record(a.zip(b, c, d, e).map { "\($0)\($1)\($2)\($3)\($4)" })
        clock.run()
        #expect(four.events == [.next(40, "1xpu"), .next(80, "2yqv"), .completed(90)])
        #expect(five.events == [.next(130, "1xpu5"), .completed(140)], "e completes with nothing left to pair")
    }

    @Test func zipOfFiveMixesValueTypes() {
        let r = Recorder<String>()
        Signal.from([1]).zip(Signal.from(["a"]), Signal.from([true]), Signal.from([2.5]), Signal.from([Character("z")]))
            .map { "\($0)\($1)\($2)\($3)\($4)" }.subscribe(r)
        #expect(r.events == [.next("1atrue2.5z"), .completed])
    }

    @Test func combineLatestOfFourSendsOnceAllHaveSent() {
        let clock = TestScheduler()
        let a = clock.hot("-1-----2---|")
        let b = clock.hot("--x--------|")
        let c = clock.hot("---p-------|")
        let d = clock.hot("----u---v--|")
        let r = clock.record(a.combineLatest(b, c, d).map { "\($0)\($1)\($2)\($3)" })
        clock.run()
        #expect(r.events == [.next(40, "1xpu"), .next(70, "2xpu"), .next(80, "2xpv"), .completed(110)])
    }

    @Test func combineLatestOfFiveCompletesAtOnceWhenOneCompletesEmptyAndForwardsErrors() {
        let a = BehaviorSubject(1), b = BehaviorSubject("x"), c = BehaviorSubject(true), d = BehaviorSubject(2.5)
        let e = Subject<Character>()
        let r = Recorder<String>()
        a.combineLatest(b, c, d, e).map { "\($0)\($1)\($2)\($3)\($4)" }.subscribe(r)
        e.sendNext("z")
        a.sendNext(2)
        #expect(r.values == ["1xtrue2.5z", "2xtrue2.5z"])
        let empty = Recorder<String>()
        a.combineLatest(b, c, d, Signal<Int>.empty).map { "\($0)\($1)\($2)\($3)\($4)" }.subscribe(empty)
        #expect(empty.events == [.completed])
        let failed = Recorder<String>()
        a.combineLatest(b, c, Signal<Int>.error(TestError()), d).map { "\($0)\($1)\($2)\($3)\($4)" }.subscribe(failed)
        #expect(failed.events == [.error(TestError())])
    }
}
