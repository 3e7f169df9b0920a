import Testing
@testable import Ripple
import RippleTestSupport
import RippleTesting

@Suite(.leakChecked) struct TransformingTests {
    @Test func mapTransformsEachValue() {
        let r = Recorder<Int>()
        Signal.from([1, 2, 3]).map { $0 * 2 }.subscribe(r)
        #expect(r.events == [.next(2), .next(4), .next(6), .completed])
    }

    @Test func filterKeepsMatchingValues() {
        let r = Recorder<Int>()
        Signal.from([1, 2, 3, 4]).filter { $0 % 2 == 0 }.subscribe(r)
        #expect(r.events == [.next(2), .next(4), .completed])
    }

    @Test func compactMapDropsNils() {
        let r = Recorder<Int>()
        Signal.from(["1", "x", "3"]).compactMap { Int($0) }.subscribe(r)
        #expect(r.events == [.next(1), .next(3), .completed])
    }

    @Test func scanDoesNotEmitItsSeed() {
        let r = Recorder<Int>()
        Signal.from([1, 2, 3]).scan(10, +).subscribe(r)
        #expect(r.events == [.next(11), .next(13), .next(16), .completed])
        let empty = Recorder<Int>()
        Signal<Int>.empty.scan(10, +).subscribe(empty)
        #expect(empty.events == [.completed])
    }

    @Test func scanStateIsPerSubscription() {
        let signal = Signal.from([1, 2]).scan(0, +)
        let a = Recorder<Int>(), b = Recorder<Int>()
        signal.subscribe(a)
        signal.subscribe(b)
        #expect(a.values == [1, 3])
        #expect(b.values == [1, 3])
    }

    @Test func reduceEmitsOnceOnCompletionAndTheSeedForAnEmptySource() {
        let r = Recorder<Int>()
        Signal.from([1, 2, 3]).reduce(0, +).subscribe(r)
        #expect(r.events == [.next(6), .completed])
        let empty = Recorder<Int>()
        Signal<Int>.empty.reduce(42, +).subscribe(empty)
        #expect(empty.events == [.next(42), .completed])
    }

    @Test func reduceSendsNothingOnError() {
        let subject = Subject<Int>()
        let r = Recorder<Int>()
        subject.reduce(0, +).subscribe(r)
        subject.sendNext(1)
        subject.sendError(TestError())
        #expect(r.events == [.error(TestError())])
    }

    @Test func collectEmitsOneArrayOnCompletionAndEmptyForAnEmptySource() {
        let r = Recorder<[Int]>()
        Signal.from([1, 2, 3]).collect().subscribe(r)
        #expect(r.events == [.next([1, 2, 3]), .completed])
        let empty = Recorder<[Int]>()
        Signal<Int>.empty.collect().subscribe(empty)
        #expect(empty.events == [.next([]), .completed])
    }

    @Test func ignoreValuesForwardsOnlyTheTerminalEvent() {
        let r = Recorder<Int>()
        Signal.from([1, 2]).ignoreValues().subscribe(r)
        #expect(r.events == [.completed])
    }

    @Test func materializeAndDematerializeRoundTrip() {
        let m = Recorder<Event<Int>>()
        Signal<Int> { s in s.sendNext(1); s.sendError(TestError()); return nil }.materialize().subscribe(m)
        #expect(m.events == [.next(.next(1)), .next(.error(TestError())), .completed])
        let d = Recorder<Int>()
        Signal.from([1, 2]).materialize().dematerialize().subscribe(d)
        #expect(d.events == [.next(1), .next(2), .completed])
    }

    @Test func distinctUntilChangedDropsRepeatsOfThePreviousValue() {
        let r = Recorder<Int>()
        Signal.from([1, 1, 2, 2, 1]).distinctUntilChanged().subscribe(r)
        #expect(r.values == [1, 2, 1])
        let by = Recorder<String>()
        Signal.from(["a", "A", "b"]).distinctUntilChanged(by: { $0.lowercased() == $1.lowercased() }).subscribe(by)
        #expect(by.values == ["a", "b"])
    }

    @Test func startWithSendsBeforeSubscribingUpstream() {
        var log: [String] = []
        Signal<Int> { s in log.append("subscribed"); s.sendNext(1); s.sendCompleted(); return nil }
            .startWith(0)
            .subscribe(next: { log.append("next \($0)") })
        #expect(log == ["next 0", "subscribed", "next 1"])
    }
}

@Suite(.leakChecked) struct FilteringTests {
    @Test func takeSendsTheFirstValuesThenCompletesAndDisposesUpstream() {
        let cleaned = Box(false)
        let subject = Subject<Int>()
        let r = Recorder<Int>()
        Signal<Int> { s in
            let d = subject.subscribe(s)
            return CompoundDisposable([d, ActionDisposable { cleaned.value = true }])
        }.take(2).subscribe(r)
        subject.sendNext(1)
        subject.sendNext(2)
        subject.sendNext(3)
        #expect(r.events == [.next(1), .next(2), .completed])
        #expect(cleaned.value)
    }

    @Test func takeZeroCompletesAtOnceWithoutSubscribing() {
        let subscribed = Box(false)
        let r = Recorder<Int>()
        Signal<Int> { _ in subscribed.value = true; return nil }.take(0).subscribe(r)
        #expect(r.events == [.completed])
        #expect(!subscribed.value)
    }

    @Test func skipDropsTheFirstValues() {
        let r = Recorder<Int>()
        Signal.from([1, 2, 3]).skip(2).subscribe(r)
        #expect(r.events == [.next(3), .completed])
    }

    @Test func takeWhileCompletesAtTheFirstFailingValue() {
        let r = Recorder<Int>()
        Signal.from([1, 2, 5, 1]).take(while: { $0 < 3 }).subscribe(r)
        #expect(r.events == [.next(1), .next(2), .completed])
    }

    @Test func skipWhileForwardsFromTheFirstFailingValue() {
        let r = Recorder<Int>()
        Signal.from([1, 2, 5, 1]).skip(while: { $0 < 3 }).subscribe(r)
        #expect(r.events == [.next(5), .next(1), .completed])
    }

    @Test func takeUntilCompletesWhenTheTriggerSendsOrCompletes() {
        let clock = TestScheduler()
        let source = clock.hot("-1-2-3-4-|")
        let trigger = clock.hot("------x")
        let r = clock.record(source.take(until: trigger))
        clock.run()
        #expect(r.events == "-1-2-3|")
        #expect(source.subscriptions == ["^-----!"])
        let clock2 = TestScheduler()
        let source2 = clock2.hot("-1-2-3-4-|")
        let trigger2 = clock2.hot("----|")
        let r2 = clock2.record(source2.take(until: trigger2))
        clock2.run()
        #expect(r2.events == "-1-2|")
    }

    @Test func takeUntilForwardsTheTriggersError() {
        let clock = TestScheduler()
        let source = clock.hot("-1-2-3-|")
        let trigger = clock.hot("--#")
        let r = clock.record(source.take(until: trigger))
        clock.run()
        #expect(r.events == "-1#")
        #expect(trigger.subscriptions == ["^-!"])
    }

    @Test func firstAndLastSendOneValueThenComplete() {
        let first = Recorder<Int>(), last = Recorder<Int>(), empty = Recorder<Int>()
        Signal.from([1, 2, 3]).first().subscribe(first)
        Signal.from([1, 2, 3]).last().subscribe(last)
        Signal<Int>.empty.last().subscribe(empty)
        #expect(first.events == [.next(1), .completed])
        #expect(last.events == [.next(3), .completed])
        #expect(empty.events == [.completed])
    }
}

@Suite(.leakChecked) struct SideEffectTests {
    @Test func onNextOnErrorOnCompletedRunBeforeForwarding() {
        var log: [String] = []
        Signal.from([1])
            .onNext { log.append("onNext \($0)") }
            .onCompleted { log.append("onCompleted") }
            .subscribe(next: { log.append("next \($0)") }, completed: { log.append("completed") })
        Signal<Int>.error(TestError())
            .onError { _ in log.append("onError") }
            .subscribe(error: { _ in log.append("error") })
        #expect(log == ["onNext 1", "next 1", "onCompleted", "completed", "onError", "error"])
    }

    @Test func onSubscribeRunsBeforeSubscribingUpstream() {
        var log: [String] = []
        Signal<Int> { _ in log.append("upstream"); return nil }
            .onSubscribe { log.append("onSubscribe") }
            .subscribe()
        #expect(log == ["onSubscribe", "upstream"])
    }

    @Test(arguments: ["completed", "error", "dispose"])
    func onDisposeRunsOncePerSubscriptionHoweverItEnds(ending: String) {
        var runs = 0
        let subject = Subject<Int>()
        let signal = subject.onDispose { runs += 1 }
        let d = signal.subscribe()
        let other = signal.subscribe()
        switch ending {
        case "completed": subject.sendCompleted()
        case "error": subject.sendError(TestError())
        default: d.dispose(); other.dispose()
        }
        d.dispose()
        #expect(runs == 2)
    }
}

@Suite(.leakChecked) struct LogTests {
    @Test func logPrintsEveryEventWithTheNameUntruncated() {
        let lines = Box<[String]>([])
        let long = String(repeating: "x", count: 5_000)
        Signal.from([1]).log("numbers", output: { line in lines.mutate { $0.append(line) } }).subscribe()
        Signal.just(long).log("long", output: { line in lines.mutate { $0.append(line) } }).subscribe()
        Signal<Int>.error(TestError()).log("failing", output: { line in lines.mutate { $0.append(line) } }).subscribe()
        #expect(lines.value == [
            "[numbers] next(1)", "[numbers] completed",
            "[long] next(\(long))", "[long] completed",
            "[failing] error(boom)",
        ])
    }
}

@Suite(.leakChecked) struct PipeTests {
    @Test func aPipelineReadsTopToBottom() {
        let r = Recorder<String>()
        let subject = Subject<Int>()
        let pipeline = subject
            |> map { $0 + 1 }
            |> filter { $0 > 2 }
            |> distinctUntilChanged
            |> map { "#\($0)" }
        pipeline.subscribe(r)
        [1, 2, 2, 3].forEach(subject.sendNext)
        #expect(r.values == ["#3", "#4"])
    }

    @Test func everyFreeFunctionMatchesItsMethod() {
        let clock = TestScheduler()
        let r = Recorder<Int>()
        (Signal.from([1, 2, 3, 4])
            |> skip(1)
            |> take(2)
            |> scan(0, +)
            |> compactMap { $0 }
            |> onNext { _ in }
            |> flatMap { Signal.just($0) }
            |> delay(.milliseconds(10), on: clock)
            |> debounce(.zero, on: clock)
            |> throttle(.zero, on: clock)
            |> deliver(on: clock)
            |> catchTo(Signal<Int>.empty)).subscribe(r)
        clock.run()
        // skip(1) → 2, 3, 4; take(2) → 2, 3; scan → 2, 5; delay shifts both to 10 ms, where
        // debounce(.zero) lets only the last of the values due at one instant through.
        #expect(r.events == [.next(5), .completed])
        let afterwards = Recorder<Int>()
        (Signal.from([1, 2]) |> then(Signal.just(9))).subscribe(afterwards)
        #expect(afterwards.events == [.next(9), .completed])
    }
}

@Suite(.leakChecked, .offThePool) struct ThrowingTransformTests {
    struct NotANumber: Error, Equatable {}

    @Test func tryMapEndsTheStreamWithTheThrownErrorAndDisposesUpstream() {
        let subject = Subject<String>()
        let r = Recorder<Int>()
        subject.tryMap { text -> Int in
            guard let n = Int(text) else { throw NotANumber() }
            return n
        }.subscribe(r)
        subject.sendNext("1")
        subject.sendNext("x")
        subject.sendNext("2")
        #expect(r.values == [1])
        #expect(r.events.last?.error is NotANumber)
        #expect(subject.storage.subscriberCount == 0)
    }

    @Test func tryFilterAndTryScanEndTheStreamWhenTheyThrow() {
        let filtered = Recorder<String>()
        Signal.from(["2", "x", "4"]).tryFilter { text in
            guard let n = Int(text) else { throw NotANumber() }
            return n > 1
        }.subscribe(filtered)
        #expect(filtered.values == ["2"])
        #expect(filtered.isFailed)
        let scanned = Recorder<Int>()
        Signal.from(["1", "2", "x"]).tryScan(0) { sum, text in
            guard let n = Int(text) else { throw NotANumber() }
            return sum + n
        }.subscribe(scanned)
        #expect(scanned.values == [1, 3])
        #expect(scanned.isFailed)
    }
}
