import Testing
@testable import Ripple
import RippleTestSupport
import RippleTesting

@Suite(.leakChecked) struct CombiningTests {
    @Test func mergeInterleavesAndCompletesWhenAllHave() {
        let clock = TestScheduler()
        let a = clock.hot("-1---3-|")
        let b = clock.hot("---2---4-|")
        let merged = clock.record(a.merge(b))
        clock.run()
        #expect(merged.events == "-1-2-3-4-|")
        let c = TestScheduler()
        let arrays = Signal<String>.merge([c.cold("-a|"), c.cold("--b|"), c.cold("c|")])
        let mergedArray = c.record(arrays)
        c.run()
        #expect(mergedArray.events == "cab|")
    }

    @Test func mergeForwardsTheFirstErrorAndDisposesTheRest() {
        let clock = TestScheduler()
        let cleaned = Box(false)
        let a = clock.hot("-1--#")
        let b = Signal<String> { _ in ActionDisposable { cleaned.value = true } }
        let recorder = clock.record(a.merge(b))
        clock.run()
        #expect(recorder.events == "-1--#")
        #expect(cleaned.value)
    }

    @Test func concatSubscribesEachWhenThePreviousCompletes() {
        let clock = TestScheduler()
        let a = clock.cold("-1-2|")
        let b = clock.cold("-3|")
        let concatenated = clock.record(a.concat(b))
        clock.run()
        #expect(concatenated.events == "-1-2-3|")
        let c = TestScheduler()
        let concatenatedArray = c.record(Signal<String>.concat([c.cold("a|"), c.cold("b|"), c.cold("c|")]))
        c.run()
        #expect(concatenatedArray.events == "abc|")
    }

    @Test func concatStopsAtAnError() {
        let clock = TestScheduler()
        let subscribedSecond = Box(false)
        let second = Signal<String> { _ in subscribedSecond.value = true; return nil }
        let recorder = clock.record(clock.cold("-1#").concat(second))
        clock.run()
        #expect(recorder.events == "-1#")
        #expect(!subscribedSecond.value)
    }

    @Test func zipPairsTheNthValuesAndCompletesWhenNothingMoreCanPair() {
        let clock = TestScheduler()
        let a = clock.hot("-1-2---3-|")
        let b = clock.hot("---x-y|")
        let zipped = clock.record(a.zip(b).map { "\($0)\($1)" })
        clock.run()
        #expect(zipped.events == [.next(30, "1x"), .next(50, "2y"), .completed(60)])
        #expect(a.subscriptions == ["^-----!"])
        #expect(b.subscriptions == ["^-----!"])
    }

    @Test func zipOfThreeAndOfAnArray() {
        let r3 = Recorder<String>()
        Signal.from([1, 2]).zip(Signal.from(["a", "b"]), Signal.from([true, false])).map { "\($0)\($1)\($2)" }.subscribe(r3)
        #expect(r3.events == [.next("1atrue"), .next("2bfalse"), .completed])
        let ra = Recorder<[Int]>()
        Signal<Int>.zip([Signal.from([1, 2]), Signal.from([3, 4]), Signal.from([5])]).subscribe(ra)
        #expect(ra.events == [.next([1, 3, 5]), .completed])
    }

    @Test func combineLatestSendsOnceAllHaveSentAndCompletesWhenAllHave() {
        let clock = TestScheduler()
        let a = clock.hot("-1---2-----|")
        let b = clock.hot("---x---y-|")
        let r = clock.record(a.combineLatest(b).map { "\($0)\($1)" })
        clock.run()
        #expect(r.events == [.next(30, "1x"), .next(50, "2x"), .next(70, "2y"), .completed(110)])
    }

    @Test func combineLatestCompletesAtOnceWhenASourceCompletesEmpty() {
        let r = Recorder<[Int]>()
        Signal<Int>.combineLatest([Signal<Int>.never, Signal<Int>.empty]).subscribe(r)
        #expect(r.events == [.completed])
    }

    @Test func combineLatestOfThree() {
        let a = BehaviorSubject(1), b = BehaviorSubject("x"), c = BehaviorSubject(true)
        let r = Recorder<String>()
        a.combineLatest(b, c).map { "\($0)\($1)\($2)" }.subscribe(r)
        b.sendNext("y")
        #expect(r.values == ["1xtrue", "1ytrue"])
    }

    @Test func flatMapMergesInnerSignalsAndWaitsForAllToComplete() {
        let clock = TestScheduler()
        let outer = clock.hot("-a---b|")
        let result = outer.flatMap { letter in clock.cold("-\(letter)--\(letter)|") }
        let recorder = clock.record(result)
        clock.run()
        #expect(recorder.events == "--a--ab--b|")
    }

    @Test func flatMapForwardsAnInnerError() {
        let clock = TestScheduler()
        let result = clock.hot("-a-b|").flatMap { letter in
            letter == "b" ? clock.cold("#") : clock.cold("-x------|")
        }
        let recorder = clock.record(result)
        clock.run()
        #expect(recorder.events == "--x#")
    }

    @Test func concatMapRunsInnerSignalsOneAtATime() {
        let clock = TestScheduler()
        let outer = clock.hot("-ab---|")
        let result = outer.concatMap { letter in clock.cold("\(letter)-\(letter)|") }
        let recorder = clock.record(result)
        clock.run()
        #expect(recorder.events == "-a-ab-b|")
    }

    @Test func switchToLatestDropsTheReplacedInner() {
        let clock = TestScheduler()
        let outer = clock.hot("-a---b---|")
        let result = outer.flatMapLatest { letter in clock.cold("-\(letter)-\(letter)-\(letter)|") }
        let recorder = clock.record(result)
        clock.run()
        #expect(recorder.events == "--a-a-b-b-b|")
        let subjects = Subject<Signal<Int>>()
        let r = Recorder<Int>()
        subjects.switchToLatest().subscribe(r)
        let first = Subject<Int>(), second = Subject<Int>()
        subjects.sendNext(first.asSignal())
        first.sendNext(1)
        subjects.sendNext(second.asSignal())
        first.sendNext(2)
        second.sendNext(3)
        subjects.sendCompleted()
        #expect(r.events == [.next(1), .next(3)])
        second.sendCompleted()
        #expect(r.events == [.next(1), .next(3), .completed])
    }

    @Test func thenIgnoresTheFirstSignalsValues() {
        let r = Recorder<String>()
        Signal.from([1, 2]).then(Signal.just("done")).subscribe(r)
        #expect(r.events == [.next("done"), .completed])
        let failed = Recorder<String>()
        Signal<Int>.error(TestError()).then(Signal.just("never")).subscribe(failed)
        #expect(failed.events == [.error(TestError())])
    }
}

@Suite(.leakChecked, .offThePool) struct StackSafetyTests {
    /// Inner signals per test, each on a thread with `stack` bytes of stack: a nesting even a few
    /// bytes deep per signal would need many times that stack, so finishing proves the operators
    /// run their immediate inner signals in a loop, not by recursion (at a tenth of the cost of a
    /// million signals on an 8-MiB stack).
    static let count = Workload.size(100_000)
    static let stack = 256 * 1024

    @Test func concatOfAHundredThousandImmediateSignalsFinishesOnASmallStack() async {
        let signals = (0..<Self.count).map { Signal.just($0) }
        let count = Box(0), completed = Box(false)
        await runOnThread(stackSize: Self.stack) {
            Signal<Int>.concat(signals).subscribe(next: { _ in count.mutate { $0 += 1 } }, completed: { completed.value = true })
        }
        #expect(count.value == Self.count)
        #expect(completed.value)
    }

    @Test func concatMapOverAHundredThousandImmediateInnerSignalsFinishesOnASmallStack() async {
        let sum = Box(0), completed = Box(false)
        await runOnThread(stackSize: Self.stack) {
            Signal.from(0..<Self.count).concatMap { Signal.just($0 % 3) }
                .subscribe(next: { value in sum.mutate { $0 += value } }, completed: { completed.value = true })
        }
        #expect(sum.value == (0..<Self.count).reduce(0) { $0 + $1 % 3 })
        #expect(completed.value)
    }

    @Test func flatMapOverAHundredThousandImmediateInnerSignalsFinishesOnASmallStack() async {
        let count = Box(0), completed = Box(false)
        await runOnThread(stackSize: Self.stack) {
            Signal.from(0..<Self.count).flatMap { Signal.just($0) }
                .subscribe(next: { _ in count.mutate { $0 += 1 } }, completed: { completed.value = true })
        }
        #expect(count.value == Self.count)
        #expect(completed.value)
    }

    @Test func combineLatestOfAHundredSignalsFinishes() {
        let sources = (0..<100).map { BehaviorSubject($0) }
        let r = Recorder<[Int]>()
        Signal<Int>.combineLatest(sources).subscribe(r)
        sources[50].sendNext(500)
        sources.forEach { $0.sendCompleted() }
        #expect(r.values.count == 2)
        #expect(r.values.first == Array(0..<100))
        #expect(r.values.last?[50] == 500)
        #expect(r.isCompleted)
    }
}
